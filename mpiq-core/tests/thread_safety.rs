//! What a debugger keeps across threads (its session, the layout
//! resolver, the decoders, what they return) must stay `Send + Sync`: this fails to
//! compile when one stops being so.
//!
//! `QueueReader` borrows its target as `&dyn Target`, which promises no
//! thread-safety; keep its decoder (`QueueReader::into_decoder`, a
//! `Box<dyn QueueDecoder>`, which is) to share across threads.

use mpiq_core::*;

fn assert_send_sync<T: Send + Sync + ?Sized>() {}

#[test]
fn resolver_and_decoders_are_send_and_sync() {
    assert_send_sync::<LayoutResolver>();
    assert_send_sync::<Session>();
    assert_send_sync::<dyn QueueDecoder>();
    assert_send_sync::<Box<dyn QueueDecoder>>();
    assert_send_sync::<MpichCh3>();
    assert_send_sync::<MpichCh4>();
    assert_send_sync::<OmpiOb1>();
    assert_send_sync::<OmpiUcx>();
    assert_send_sync::<ProfileDecoder>();
    assert_send_sync::<MqsLibrary>();
}

#[test]
fn results_and_errors_are_send_and_sync() {
    assert_send_sync::<mpiq_core::model::ProcessQueues>();
    assert_send_sync::<DecodeError>();
    assert_send_sync::<QueueReadError>();
    assert_send_sync::<MqsError>();
    assert_send_sync::<FoundLibrary>();
    assert_send_sync::<Identified>();
    assert_send_sync::<SessionReading>();
    assert_send_sync::<Provenance>();
}
