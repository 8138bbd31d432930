/*
 * mpir_target.c: a tiny "MPI starter" that exposes the MPIR process
 * acquisition symbols and an MPI-2 debugger-interface (MPI2DD) metadirectory,
 * fills them with distinctive values, prints what it filled in as
 * key=value lines on stdout, calls MPIR_Breakpoint() and then abort()s so
 * that qemu-user writes a guest core file. Built by make-cores.sh as a PIE
 * for foreign CPUs; a core-file reader's test compares what it decodes from
 * the core with the printed values.
 *
 * Output format: one `key=value` per line, split at the first '='; numbers
 * are decimal, addresses and flags 0x-prefixed lower-case hex (guest
 * addresses); `*.str` values are the raw C strings (none contains a newline).
 * On armhf, addr.main and addr.MPIR_Breakpoint have bit 0 set (Thumb code),
 * as the symbol values in the executable do.
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

/* ---- MPIR (process acquisition interface) ---- */

typedef struct {
  char *host_name;
  char *executable_name;
  int pid;
} MPIR_PROCDESC;

#define MPIR_NULL 0
#define MPIR_DEBUG_SPAWNED 1
#define MPIR_DEBUG_ABORTING 2

#define USED __attribute__((used))

USED MPIR_PROCDESC *MPIR_proctable = 0;
USED int MPIR_proctable_size = 0;
USED volatile int MPIR_debug_state = MPIR_NULL;
USED volatile int MPIR_debug_gate = 0;
USED int MPIR_being_debugged = 0;
USED char *MPIR_debug_abort_string = 0;
USED int MPIR_i_am_starter = 0;
USED int MPIR_partial_attach_ok = 0;
USED char MPIR_dll_name[] = "libmpidd_qemu_dll.so";
USED char MPIR_executable_path[256];

/* From fixture_lib.c, a shared library found only through link_map. */
extern const char mpidd_lib_banner[];
extern int mpidd_lib_counter;
extern const char *mpidd_lib_banner_address(void);

USED __attribute__((noinline)) void MPIR_Breakpoint(void) {
  __asm__ volatile("" ::: "memory");
}

/* ---- MPI2DD (MPI-2 debugger interface draft) ----
 * Natural C layout, as MPICH's mpi2_interface.h compiles; with
 * -DMPI2DD_PACKED, packed as the draft says (no padding between fields,
 * so an LP64 MPI2DD_DIRECTORYENTRY is 20 bytes, not 24). */
#ifdef MPI2DD_PACKED
#define MPI2DD_LAYOUT __attribute__((packed))
#define MPI2DD_LAYOUT_NAME "packed"
#else
#define MPI2DD_LAYOUT
#define MPI2DD_LAYOUT_NAME "natural"
#endif

typedef __UINTPTR_TYPE__ MPI2DD_ADDR_T;
typedef __INT32_TYPE__ MPI2DD_INT32_T;
typedef __UINT32_TYPE__ MPI2DD_UINT32_T;
typedef unsigned char MPI2DD_BYTE_T;

struct MPI2DD_LAYOUT MPI2DD_INFO {
  MPI2DD_BYTE_T magic[5];
  MPI2DD_BYTE_T version;
  MPI2DD_BYTE_T variant;
  MPI2DD_BYTE_T debug_state;
  MPI2DD_UINT32_T debugger_flags;
  MPI2DD_UINT32_T mpi_flags;
  MPI2DD_ADDR_T dll_name_32;
  MPI2DD_ADDR_T dll_name_64;
  MPI2DD_ADDR_T meta_host_name;
  MPI2DD_ADDR_T meta_executable_name;
  MPI2DD_ADDR_T abort_string;
  MPI2DD_ADDR_T proctable;
  MPI2DD_ADDR_T directory_table;
  MPI2DD_ADDR_T metadirectory_table;
  MPI2DD_INT32_T proctable_size;
  MPI2DD_INT32_T directory_size;
  MPI2DD_INT32_T metadirectory_size;
  MPI2DD_INT32_T meta_pid;
  MPI2DD_INT32_T padding[8];
};

struct MPI2DD_LAYOUT MPI2DD_PROCDESC {
  MPI2DD_ADDR_T host_name;
  MPI2DD_ADDR_T executable_name;
  MPI2DD_ADDR_T spawn_desc;
  MPI2DD_ADDR_T comm_world_id;
  MPI2DD_INT32_T pid;
  MPI2DD_INT32_T rank;
};

struct MPI2DD_LAYOUT MPI2DD_SPAWNDESC {
  MPI2DD_ADDR_T parent_comm_world_id;
  MPI2DD_INT32_T parent_rank;
  MPI2DD_INT32_T sequence;
};

struct MPI2DD_LAYOUT MPI2DD_DIRECTORYENTRY {
  MPI2DD_ADDR_T host_name;
  MPI2DD_ADDR_T executable_name;
  MPI2DD_INT32_T pid;
};

#define MPI2DD_DEBUG_SPAWNED 1
#define MPI2DD_FLAG_DIR 0x02u
#define MPI2DD_FLAG_PARTIAL_ATTACH_OK 0x40u

USED struct MPI2DD_INFO MPI2DD_info = {
  { 'M', 'P', 'I', '2', 0x7f }, 1, 1, 0, 0, 0,
  0, 0, 0, 0, 0, 0, 0, 0,
  0, 0, 0, 0,
  { 0 },
};

/* comm_world_id and parent_comm_world_id are addresses of strings that name
 * an MPI_COMM_WORLD; the parent's is on the heap, this one in .data. */
USED char comm_world_anchor[] = "world-0@meta-host";

#define NPROCS 4
#define NDIRS 2

/* Strings in .rodata (string literals) ... */
static const char *const rodata_hosts[NPROCS] = {
  "node-a.example", "node-b.example", "node-a.example", "node-c.example"
};
static const char *const rodata_dir_exec = "/opt/mpidd/bin/daemon";
static const char *const rodata_abort = "aborting on purpose for a core dump";

/* ... and on the heap. */
static char *heap_str(const char *s) {
  char *p = malloc(strlen(s) + 1);
  if (!p) abort();
  strcpy(p, s);
  return p;
}

#define ADDR(p) ((unsigned long long)(uintptr_t)(p))

/* The first dl_iterate_phdr entry is the executable: its dlpi_addr is the
 * PIE load bias (the link_map l_addr of the main program). */
static int first_bias(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  *(unsigned long long *)data = info->dlpi_addr;
  return 1;
}

int main(int argc, char **argv) {
  int i;
  (void)argc;

  /* Executable names: heap strings (one per entry, distinct). */
  char *execs[NPROCS];
  for (i = 0; i < NPROCS; i++) {
    char buf[64];
    snprintf(buf, sizeof buf, "/opt/mpidd/bin/rank%d.exe", i);
    execs[i] = heap_str(buf);
  }
  /* Pids: include -1 (unknown) and other distinctive values. */
  static const int pids[NPROCS] = { 4242, -1, 70000, 2147483647 };

  /* ---- MPIR table (malloc'd) ---- */
  MPIR_PROCDESC *pt = malloc(NPROCS * sizeof *pt);
  if (!pt) abort();
  for (i = 0; i < NPROCS; i++) {
    pt[i].host_name = (char *)rodata_hosts[i];  /* .rodata */
    pt[i].executable_name = execs[i];          /* heap */
    pt[i].pid = pids[i];
  }
  MPIR_proctable = pt;
  MPIR_proctable_size = NPROCS;
  MPIR_being_debugged = 0;
  MPIR_debug_abort_string = (char *)rodata_abort;
  MPIR_i_am_starter = 1;
  MPIR_partial_attach_ok = 1;
  strncpy(MPIR_executable_path, argv[0], sizeof MPIR_executable_path - 1);

  /* ---- MPI2DD ---- */
  struct MPI2DD_SPAWNDESC *sd = malloc(sizeof *sd);
  if (!sd) abort();
  char *parent_world = strdup("world-parent@meta-host");
  if (!parent_world) abort();
  sd->parent_comm_world_id = (MPI2DD_ADDR_T)parent_world;
  sd->parent_rank = -2147483647 - 1;
  sd->sequence = 3;

  struct MPI2DD_PROCDESC *dpt = malloc(NPROCS * sizeof *dpt);
  if (!dpt) abort();
  static const int ranks[NPROCS] = { 0, 1, 2, 3 };
  for (i = 0; i < NPROCS; i++) {
    dpt[i].host_name = (MPI2DD_ADDR_T)rodata_hosts[i];
    dpt[i].executable_name = (MPI2DD_ADDR_T)execs[i];
    dpt[i].spawn_desc = (i == 3) ? (MPI2DD_ADDR_T)sd : 0;
    dpt[i].comm_world_id = (MPI2DD_ADDR_T)comm_world_anchor;
    dpt[i].pid = pids[i];
    dpt[i].rank = ranks[i];
  }

  static const int dir_pids[NDIRS] = { -1, 31337 };
  struct MPI2DD_DIRECTORYENTRY *dir = malloc(NDIRS * sizeof *dir);
  if (!dir) abort();
  char *dir_hosts[NDIRS];
  dir_hosts[0] = heap_str("daemon-host-0.example");
  dir_hosts[1] = heap_str("daemon-host-1.example");
  for (i = 0; i < NDIRS; i++) {
    dir[i].host_name = (MPI2DD_ADDR_T)dir_hosts[i];
    dir[i].executable_name = (MPI2DD_ADDR_T)rodata_dir_exec;
    dir[i].pid = dir_pids[i];
  }

  char *meta_host = heap_str("meta-host.example");
  MPI2DD_info.debug_state = MPI2DD_DEBUG_SPAWNED;
  MPI2DD_info.debugger_flags = 0;
  MPI2DD_info.mpi_flags = MPI2DD_FLAG_DIR | MPI2DD_FLAG_PARTIAL_ATTACH_OK;
  MPI2DD_info.dll_name_32 = (MPI2DD_ADDR_T)MPIR_dll_name;
  MPI2DD_info.dll_name_64 = (MPI2DD_ADDR_T)MPIR_dll_name;
  MPI2DD_info.meta_host_name = (MPI2DD_ADDR_T)meta_host;
  MPI2DD_info.meta_executable_name = (MPI2DD_ADDR_T)MPIR_executable_path;
  MPI2DD_info.abort_string = (MPI2DD_ADDR_T)rodata_abort;
  MPI2DD_info.proctable = (MPI2DD_ADDR_T)dpt;
  MPI2DD_info.directory_table = (MPI2DD_ADDR_T)dir;
  MPI2DD_info.metadirectory_table = 0;
  MPI2DD_info.proctable_size = NPROCS;
  MPI2DD_info.directory_size = NDIRS;
  MPI2DD_info.metadirectory_size = 0;
  MPI2DD_info.meta_pid = -1;
  for (i = 0; i < 8; i++) MPI2DD_info.padding[i] = 0;

  /* ---- expected values, key=value ---- */
  printf("format=mpir_target-1\n");
  printf("pointer_size=%u\n", (unsigned)sizeof(void *));
  printf("mpi2dd_layout=%s\n", MPI2DD_LAYOUT_NAME);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
  printf("endian=big\n");
#else
  printf("endian=little\n");
#endif
  unsigned long long bias = 0;
  dl_iterate_phdr(first_bias, &bias);
  printf("load_bias=0x%llx\n", bias);
  printf("auxv.AT_PHDR=0x%llx\n", (unsigned long long)getauxval(AT_PHDR));
  printf("auxv.AT_ENTRY=0x%llx\n", (unsigned long long)getauxval(AT_ENTRY));
  printf("auxv.AT_BASE=0x%llx\n", (unsigned long long)getauxval(AT_BASE));
  printf("addr.main=0x%llx\n", ADDR(&main));
  printf("addr.MPIR_Breakpoint=0x%llx\n", ADDR(&MPIR_Breakpoint));
  printf("addr.MPIR_proctable=0x%llx\n", ADDR(&MPIR_proctable));
  printf("addr.MPIR_proctable_size=0x%llx\n", ADDR(&MPIR_proctable_size));
  printf("addr.MPIR_debug_state=0x%llx\n", ADDR(&MPIR_debug_state));
  printf("addr.MPIR_executable_path=0x%llx\n", ADDR(MPIR_executable_path));
  printf("addr.MPIR_dll_name=0x%llx\n", ADDR(MPIR_dll_name));
  printf("addr.MPI2DD_info=0x%llx\n", ADDR(&MPI2DD_info));
  printf("addr.comm_world_anchor=0x%llx\n", ADDR(comm_world_anchor));
  /* The library's own idea of its symbol (no copy relocation, no PLT). */
  printf("addr.mpidd_lib_banner=0x%llx\n", ADDR(mpidd_lib_banner_address()));
  printf("mpidd_lib_banner.str=%s\n", mpidd_lib_banner_address());
  printf("mpidd_lib_counter=%d\n", mpidd_lib_counter);
  /* A PIE takes a function's address through the GOT: libc's own. */
  printf("addr.abort=0x%llx\n", ADDR(&abort));
  printf("sizeof.MPIR_PROCDESC=%u\n", (unsigned)sizeof(MPIR_PROCDESC));
  printf("sizeof.MPI2DD_INFO=%u\n", (unsigned)sizeof(struct MPI2DD_INFO));
  printf("sizeof.MPI2DD_PROCDESC=%u\n", (unsigned)sizeof(struct MPI2DD_PROCDESC));
  printf("sizeof.MPI2DD_DIRECTORYENTRY=%u\n",
         (unsigned)sizeof(struct MPI2DD_DIRECTORYENTRY));
  printf("sizeof.MPI2DD_SPAWNDESC=%u\n", (unsigned)sizeof(struct MPI2DD_SPAWNDESC));

  printf("MPIR_proctable=0x%llx\n", ADDR(MPIR_proctable));
  printf("MPIR_proctable_size=%d\n", MPIR_proctable_size);
  printf("MPIR_debug_state=%d\n", MPIR_DEBUG_SPAWNED);
  printf("MPIR_debug_gate=%d\n", MPIR_debug_gate);
  printf("MPIR_being_debugged=%d\n", MPIR_being_debugged);
  printf("MPIR_i_am_starter=%d\n", MPIR_i_am_starter);
  printf("MPIR_partial_attach_ok=%d\n", MPIR_partial_attach_ok);
  printf("MPIR_debug_abort_string=0x%llx\n", ADDR(MPIR_debug_abort_string));
  printf("MPIR_debug_abort_string.str=%s\n", MPIR_debug_abort_string);
  printf("MPIR_dll_name.str=%s\n", MPIR_dll_name);
  printf("MPIR_executable_path.str=%s\n", MPIR_executable_path);
  for (i = 0; i < MPIR_proctable_size; i++) {
    printf("MPIR_proctable[%d].host_name=0x%llx\n", i, ADDR(pt[i].host_name));
    printf("MPIR_proctable[%d].host_name.str=%s\n", i, pt[i].host_name);
    printf("MPIR_proctable[%d].executable_name=0x%llx\n", i,
           ADDR(pt[i].executable_name));
    printf("MPIR_proctable[%d].executable_name.str=%s\n", i,
           pt[i].executable_name);
    printf("MPIR_proctable[%d].pid=%d\n", i, pt[i].pid);
  }

  printf("MPI2DD_info.version=%u\n", MPI2DD_info.version);
  printf("MPI2DD_info.variant=%u\n", MPI2DD_info.variant);
  printf("MPI2DD_info.debug_state=%u\n", MPI2DD_info.debug_state);
  printf("MPI2DD_info.debugger_flags=0x%x\n", (unsigned)MPI2DD_info.debugger_flags);
  printf("MPI2DD_info.mpi_flags=0x%x\n", (unsigned)MPI2DD_info.mpi_flags);
  printf("MPI2DD_info.dll_name_32=0x%llx\n", (unsigned long long)MPI2DD_info.dll_name_32);
  printf("MPI2DD_info.dll_name_64=0x%llx\n", (unsigned long long)MPI2DD_info.dll_name_64);
  printf("MPI2DD_info.meta_host_name=0x%llx\n",
         (unsigned long long)MPI2DD_info.meta_host_name);
  printf("MPI2DD_info.meta_host_name.str=%s\n", meta_host);
  printf("MPI2DD_info.meta_executable_name=0x%llx\n",
         (unsigned long long)MPI2DD_info.meta_executable_name);
  printf("MPI2DD_info.abort_string=0x%llx\n", (unsigned long long)MPI2DD_info.abort_string);
  printf("MPI2DD_info.proctable=0x%llx\n", (unsigned long long)MPI2DD_info.proctable);
  printf("MPI2DD_info.directory_table=0x%llx\n",
         (unsigned long long)MPI2DD_info.directory_table);
  printf("MPI2DD_info.metadirectory_table=0x%llx\n",
         (unsigned long long)MPI2DD_info.metadirectory_table);
  printf("MPI2DD_info.proctable_size=%d\n", MPI2DD_info.proctable_size);
  printf("MPI2DD_info.directory_size=%d\n", MPI2DD_info.directory_size);
  printf("MPI2DD_info.metadirectory_size=%d\n", MPI2DD_info.metadirectory_size);
  printf("MPI2DD_info.meta_pid=%d\n", MPI2DD_info.meta_pid);
  for (i = 0; i < NPROCS; i++) {
    printf("MPI2DD_proctable[%d].host_name=0x%llx\n", i,
           (unsigned long long)dpt[i].host_name);
    printf("MPI2DD_proctable[%d].host_name.str=%s\n", i, rodata_hosts[i]);
    printf("MPI2DD_proctable[%d].executable_name=0x%llx\n", i,
           (unsigned long long)dpt[i].executable_name);
    printf("MPI2DD_proctable[%d].executable_name.str=%s\n", i, execs[i]);
    printf("MPI2DD_proctable[%d].spawn_desc=0x%llx\n", i,
           (unsigned long long)dpt[i].spawn_desc);
    printf("MPI2DD_proctable[%d].comm_world_id=0x%llx\n", i,
           (unsigned long long)dpt[i].comm_world_id);
    printf("MPI2DD_proctable[%d].comm_world_id.str=%s\n", i,
           (const char *)dpt[i].comm_world_id);
    printf("MPI2DD_proctable[%d].pid=%d\n", i, dpt[i].pid);
    printf("MPI2DD_proctable[%d].rank=%d\n", i, dpt[i].rank);
  }
  printf("MPI2DD_spawndesc.parent_comm_world_id=0x%llx\n",
         (unsigned long long)sd->parent_comm_world_id);
  printf("MPI2DD_spawndesc.parent_comm_world_id.str=%s\n",
         (const char *)sd->parent_comm_world_id);
  printf("MPI2DD_spawndesc.parent_rank=%d\n", sd->parent_rank);
  printf("MPI2DD_spawndesc.sequence=%d\n", sd->sequence);
  for (i = 0; i < NDIRS; i++) {
    printf("MPI2DD_directory[%d].host_name=0x%llx\n", i,
           (unsigned long long)dir[i].host_name);
    printf("MPI2DD_directory[%d].host_name.str=%s\n", i, dir_hosts[i]);
    printf("MPI2DD_directory[%d].executable_name=0x%llx\n", i,
           (unsigned long long)dir[i].executable_name);
    printf("MPI2DD_directory[%d].executable_name.str=%s\n", i, rodata_dir_exec);
    printf("MPI2DD_directory[%d].pid=%d\n", i, dir[i].pid);
  }
  printf("end=1\n");
  fflush(stdout);

  MPIR_debug_state = MPIR_DEBUG_SPAWNED;
  MPIR_Breakpoint();
  abort();
}
