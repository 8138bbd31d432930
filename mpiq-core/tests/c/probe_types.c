/* The type the probe library looks up through mqs_find_type. Compiled with
 * -g for each ABI the probe test covers; the test lays out its synthetic
 * nodes by the C rules for that ABI, independently of the DWARF. */
typedef struct probe_node {
    struct probe_node *next;
    int tag;
    long len;
    char name[12];
} probe_node_t;

probe_node_t probe_anchor;
