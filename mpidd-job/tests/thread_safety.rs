//! A debugger that reads a job from several threads shares one
//! `JobReader`: this fails to compile when it stops being `Send + Sync`.

use mpidd_job::*;

fn assert_send_sync<T: Send + Sync + ?Sized>() {}

#[test]
fn job_reader_is_send_and_sync() {
    assert_send_sync::<JobReader>();
    assert_send_sync::<ReadOptions>();
    assert_send_sync::<RankReading>();
    assert_send_sync::<StackTree>();
}
