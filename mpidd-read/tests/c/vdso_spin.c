/* Spends nearly all its time inside the vDSO's clock_gettime, as an MPI
 * progress loop that checks the time does: a stack taken at any moment
 * has its innermost frame there (mpidd-read/tests/vdso_stacks.rs). */
#include <stdio.h>
#include <time.h>

static long __attribute__((noinline)) spin_on_the_clock(void)
{
    struct timespec ts;
    long sum = 0;
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        sum += ts.tv_nsec;
    }
    return sum;
}

int main(void)
{
    printf("READY\n");
    fflush(stdout);
    return (int)spin_on_the_clock();
}
