/*
 * fixture_lib.c: a shared library for mpir_target.c. A core without NT_FILE
 * says nothing about shared libraries; a reader finds this one only through
 * the dynamic linker's link_map list, and reads its .rodata (left out of
 * qemu-user cores) from the library file.
 */
const char mpidd_lib_banner[] = "read from a shared library through link_map";
int mpidd_lib_counter = 271828;

const char *mpidd_lib_banner_address(void) { return mpidd_lib_banner; }
