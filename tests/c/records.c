/*
 * The debugger-interface records as a C compiler lays them out, written
 * from the interface documents in shared/reference, independently of the
 * Rust code. The compiler-layout test builds this file for each target ABI
 * (`gcc -c` only, no headers, no libc) and reads from the object file:
 *
 *   layout_<RECORD>    sizeof, then offsetof of each field in declaration order
 *   instance_<RECORD>  one initialized record
 *   array_<RECORD>     three records, to show the array stride
 *
 * The MPI2DD records come twice, `_natural` and `_packed`. Addresses and
 * words are plain integers so the data needs no relocations.
 */

/* ADDR(n): distinct address values with the top bit set, so that a reader
 * that sign-extends or truncates them gets them wrong. The Rust test uses
 * the same formula. */
#if __SIZEOF_POINTER__ == 8
#define ADDR(n) (0xfedcba9876540000ull + 0x10101ull * (n))
#else
#define ADDR(n) (0x80001000u + 0x10101u * (n))
#endif

/* A word that only fits when the target's long is as wide as its pointer. */
#define BIG_WORD (1l << (8 * sizeof(long) - 2))

/* ---- MPIR (mpich-attach-process-acquisition.txt): always a plain struct. */

typedef struct {
  char *host_name;
  char *executable_name;
  int pid;
} MPIR_PROCDESC;

const unsigned int layout_MPIR_PROCDESC[] = {
  sizeof(MPIR_PROCDESC),
  __builtin_offsetof(MPIR_PROCDESC, host_name),
  __builtin_offsetof(MPIR_PROCDESC, executable_name),
  __builtin_offsetof(MPIR_PROCDESC, pid),
};

const MPIR_PROCDESC instance_MPIR_PROCDESC = {
  (char *)ADDR(1), (char *)ADDR(2), -1
};

const MPIR_PROCDESC array_MPIR_PROCDESC[3] = {
  { (char *)ADDR(3), (char *)ADDR(4), 100 },
  { (char *)ADDR(5), (char *)ADDR(6), 101 },
  { (char *)ADDR(7), (char *)ADDR(8), 102 },
};

/* ---- mqs (message-queue-dumping-interface.txt): plain structs, with the
 * interface's typedefs for target addresses and words. */

typedef unsigned long mqs_taddr_t;
typedef long mqs_tword_t;

typedef struct {
  mqs_taddr_t unique_id;
  mqs_tword_t local_rank;
  mqs_tword_t size;
  char name[64];
} mqs_communicator;

const unsigned int layout_mqs_communicator[] = {
  sizeof(mqs_communicator),
  __builtin_offsetof(mqs_communicator, unique_id),
  __builtin_offsetof(mqs_communicator, local_rank),
  __builtin_offsetof(mqs_communicator, size),
  __builtin_offsetof(mqs_communicator, name),
};

const mqs_communicator instance_mqs_communicator = {
  ADDR(9), -1, BIG_WORD, "MPI_COMM_WORLD"
};

const mqs_communicator array_mqs_communicator[3] = {
  { ADDR(10), 0, 4, "a" },
  { ADDR(11), 1, 4, "b" },
  { ADDR(12), 2, 4, "c" },
};

typedef struct {
  int status;
  mqs_tword_t desired_local_rank;
  mqs_tword_t desired_global_rank;
  int tag_wild;
  mqs_tword_t desired_tag;
  mqs_tword_t desired_length;
  int system_buffer;
  mqs_taddr_t buffer;
  mqs_tword_t actual_local_rank;
  mqs_tword_t actual_global_rank;
  mqs_tword_t actual_tag;
  mqs_tword_t actual_length;
  char extra_text[5][64];
} mqs_pending_operation;

const unsigned int layout_mqs_pending_operation[] = {
  sizeof(mqs_pending_operation),
  __builtin_offsetof(mqs_pending_operation, status),
  __builtin_offsetof(mqs_pending_operation, desired_local_rank),
  __builtin_offsetof(mqs_pending_operation, desired_global_rank),
  __builtin_offsetof(mqs_pending_operation, tag_wild),
  __builtin_offsetof(mqs_pending_operation, desired_tag),
  __builtin_offsetof(mqs_pending_operation, desired_length),
  __builtin_offsetof(mqs_pending_operation, system_buffer),
  __builtin_offsetof(mqs_pending_operation, buffer),
  __builtin_offsetof(mqs_pending_operation, actual_local_rank),
  __builtin_offsetof(mqs_pending_operation, actual_global_rank),
  __builtin_offsetof(mqs_pending_operation, actual_tag),
  __builtin_offsetof(mqs_pending_operation, actual_length),
  __builtin_offsetof(mqs_pending_operation, extra_text),
};

const mqs_pending_operation instance_mqs_pending_operation = {
  1,            /* status: matched */
  -1,           /* desired_local_rank: any source */
  -2,           /* desired_global_rank: MPICH's MPI_ANY_SOURCE */
  1,            /* tag_wild */
  -1,           /* desired_tag */
  BIG_WORD,     /* desired_length */
  0,            /* system_buffer */
  ADDR(13),     /* buffer */
  5, 7, 99, 1024,
  { "MPI_Irecv", "from ring.c:42", "" },
};

const mqs_pending_operation array_mqs_pending_operation[3] = {
  { 0, 1, 1, 0, 10, 8, 0, ADDR(14), 1, 1, 10, 8, { "x" } },
  { 2, 2, 2, 0, 20, 16, 1, ADDR(15), 2, 2, 20, 16, { "y" } },
  { 7, 3, 3, 0, 30, 32, 0, ADDR(16), 3, 3, 30, 32, { "z" } },
};

/* ---- MPI2DD (mpi2-debugger-interface-draft.txt), in both packings. */

typedef __UINTPTR_TYPE__ MPI2DD_ADDR_T;
typedef __INT32_TYPE__ MPI2DD_INT32_T;
typedef __UINT32_TYPE__ MPI2DD_UINT32_T;
typedef unsigned char MPI2DD_BYTE_T;

#define REC(name) name##_natural
#define PACKED_ATTR
#include "mpi2dd_records.h"
#undef REC
#undef PACKED_ATTR

#define REC(name) name##_packed
#define PACKED_ATTR __attribute__((packed))
#include "mpi2dd_records.h"
#undef REC
#undef PACKED_ATTR
