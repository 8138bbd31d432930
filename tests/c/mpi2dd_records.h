/*
 * Included twice by records.c: REC(name) gives each struct and symbol a
 * `_natural` or `_packed` suffix, and PACKED_ATTR is empty or
 * __attribute__((packed)).
 */

struct REC(MPI2DD_INFO) {
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
} PACKED_ATTR;

const unsigned int REC(layout_MPI2DD_INFO)[] = {
  sizeof(struct REC(MPI2DD_INFO)),
  __builtin_offsetof(struct REC(MPI2DD_INFO), magic),
  __builtin_offsetof(struct REC(MPI2DD_INFO), version),
  __builtin_offsetof(struct REC(MPI2DD_INFO), variant),
  __builtin_offsetof(struct REC(MPI2DD_INFO), debug_state),
  __builtin_offsetof(struct REC(MPI2DD_INFO), debugger_flags),
  __builtin_offsetof(struct REC(MPI2DD_INFO), mpi_flags),
  __builtin_offsetof(struct REC(MPI2DD_INFO), dll_name_32),
  __builtin_offsetof(struct REC(MPI2DD_INFO), dll_name_64),
  __builtin_offsetof(struct REC(MPI2DD_INFO), meta_host_name),
  __builtin_offsetof(struct REC(MPI2DD_INFO), meta_executable_name),
  __builtin_offsetof(struct REC(MPI2DD_INFO), abort_string),
  __builtin_offsetof(struct REC(MPI2DD_INFO), proctable),
  __builtin_offsetof(struct REC(MPI2DD_INFO), directory_table),
  __builtin_offsetof(struct REC(MPI2DD_INFO), metadirectory_table),
  __builtin_offsetof(struct REC(MPI2DD_INFO), proctable_size),
  __builtin_offsetof(struct REC(MPI2DD_INFO), directory_size),
  __builtin_offsetof(struct REC(MPI2DD_INFO), metadirectory_size),
  __builtin_offsetof(struct REC(MPI2DD_INFO), meta_pid),
  __builtin_offsetof(struct REC(MPI2DD_INFO), padding),
};

const struct REC(MPI2DD_INFO) REC(instance_MPI2DD_INFO) = {
  { 'M', 'P', 'I', '2', 0x7f },
  1,                  /* version */
  1,                  /* variant */
  6,                  /* debug_state: MPI2DD_DEBUG_DIRECTORY_CHANGED */
  0x80000005u,        /* debugger_flags: GATE | REQUEST_DIRECTORY_EVENTS | an unknown bit */
  0x00000043u,        /* mpi_flags: METADIR | DIR | PARTIAL_ATTACH_OK */
  ADDR(20), ADDR(21), ADDR(22), ADDR(23),
  ADDR(24), ADDR(25), ADDR(26), ADDR(27),
  6,                  /* proctable_size */
  2,                  /* directory_size */
  0,                  /* metadirectory_size */
  -1,                 /* meta_pid */
  { 0, -1, 2, -3, 4, -5, 6, 0x7fffffff },
};

const struct REC(MPI2DD_INFO) REC(array_MPI2DD_INFO)[3] = {
  { .magic = { 'M', 'P', 'I', '2', 0x7f }, .version = 1, .variant = 1,
    .debug_state = 1, .mpi_flags = 1, .dll_name_64 = ADDR(30) },
  { .magic = { 'M', 'P', 'I', '2', 0x7f }, .version = 1, .variant = 1,
    .debug_state = 2, .mpi_flags = 2, .dll_name_64 = ADDR(31) },
  { .magic = { 'M', 'P', 'I', '2', 0x7f }, .version = 1, .variant = 1,
    .debug_state = 3, .mpi_flags = 4, .dll_name_64 = ADDR(32) },
};

struct REC(MPI2DD_PROCDESC) {
  MPI2DD_ADDR_T host_name;
  MPI2DD_ADDR_T executable_name;
  MPI2DD_ADDR_T spawn_desc;
  MPI2DD_ADDR_T comm_world_id;
  MPI2DD_INT32_T pid;
  MPI2DD_INT32_T rank;
} PACKED_ATTR;

const unsigned int REC(layout_MPI2DD_PROCDESC)[] = {
  sizeof(struct REC(MPI2DD_PROCDESC)),
  __builtin_offsetof(struct REC(MPI2DD_PROCDESC), host_name),
  __builtin_offsetof(struct REC(MPI2DD_PROCDESC), executable_name),
  __builtin_offsetof(struct REC(MPI2DD_PROCDESC), spawn_desc),
  __builtin_offsetof(struct REC(MPI2DD_PROCDESC), comm_world_id),
  __builtin_offsetof(struct REC(MPI2DD_PROCDESC), pid),
  __builtin_offsetof(struct REC(MPI2DD_PROCDESC), rank),
};

const struct REC(MPI2DD_PROCDESC) REC(instance_MPI2DD_PROCDESC) = {
  ADDR(40), ADDR(41), 0, ADDR(43), -1, 2147483647
};

const struct REC(MPI2DD_PROCDESC) REC(array_MPI2DD_PROCDESC)[3] = {
  { ADDR(44), ADDR(45), 0, ADDR(46), 1000, 0 },
  { ADDR(47), ADDR(48), ADDR(49), ADDR(50), 1001, 1 },
  { ADDR(51), ADDR(52), 0, ADDR(53), 1002, 2 },
};

struct REC(MPI2DD_SPAWNDESC) {
  MPI2DD_ADDR_T parent_comm_world_id;
  MPI2DD_INT32_T parent_rank;
  MPI2DD_INT32_T sequence;
} PACKED_ATTR;

const unsigned int REC(layout_MPI2DD_SPAWNDESC)[] = {
  sizeof(struct REC(MPI2DD_SPAWNDESC)),
  __builtin_offsetof(struct REC(MPI2DD_SPAWNDESC), parent_comm_world_id),
  __builtin_offsetof(struct REC(MPI2DD_SPAWNDESC), parent_rank),
  __builtin_offsetof(struct REC(MPI2DD_SPAWNDESC), sequence),
};

const struct REC(MPI2DD_SPAWNDESC) REC(instance_MPI2DD_SPAWNDESC) = {
  ADDR(60), -2147483647 - 1, 3
};

const struct REC(MPI2DD_SPAWNDESC) REC(array_MPI2DD_SPAWNDESC)[3] = {
  { ADDR(61), 0, 0 },
  { ADDR(62), 0, 1 },
  { ADDR(63), 1, 0 },
};

struct REC(MPI2DD_DIRECTORYENTRY) {
  MPI2DD_ADDR_T host_name;
  MPI2DD_ADDR_T executable_name;
  MPI2DD_INT32_T pid;
} PACKED_ATTR;

const unsigned int REC(layout_MPI2DD_DIRECTORYENTRY)[] = {
  sizeof(struct REC(MPI2DD_DIRECTORYENTRY)),
  __builtin_offsetof(struct REC(MPI2DD_DIRECTORYENTRY), host_name),
  __builtin_offsetof(struct REC(MPI2DD_DIRECTORYENTRY), executable_name),
  __builtin_offsetof(struct REC(MPI2DD_DIRECTORYENTRY), pid),
};

const struct REC(MPI2DD_DIRECTORYENTRY) REC(instance_MPI2DD_DIRECTORYENTRY) = {
  ADDR(70), ADDR(71), -1
};

const struct REC(MPI2DD_DIRECTORYENTRY) REC(array_MPI2DD_DIRECTORYENTRY)[3] = {
  { ADDR(72), ADDR(73), 4200 },
  { ADDR(74), ADDR(75), 4201 },
  { ADDR(76), ADDR(77), 4202 },
};
