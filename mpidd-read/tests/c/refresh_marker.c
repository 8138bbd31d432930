/* The library dlopen_later.c opens: one global a reader finds only once
 * it has seen the library loaded. */
const unsigned long refresh_marker = 0x5eed1e55c0ffee00UL;

/* A type only this library's DWARF describes (when built with -g). */
struct refresh_record {
  int count;
  double weight;
};
struct refresh_record refresh_records[2];
