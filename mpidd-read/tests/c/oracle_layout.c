/*
 * Types for the DWARF type-oracle test, with the compiler's own answers.
 *
 * The test links this file with oracle_layout_def.c into one shared object
 * (`gcc -g -shared -fPIC -nostdlib`, for several targets and DWARF
 * versions), asks the oracle about these types, and compares with what the
 * compiler wrote into two parallel read-only arrays:
 *
 *   truth[i]        a number: sizeof, offsetof, an array length, a bit width
 *   truth_names     the i-th NUL-terminated string says what truth[i] is:
 *     "size|T"            sizeof(T)
 *     "offset|T|a.b"      offsetof(T, a.b)
 *     "msize|T|a.b"       sizeof of member a.b of T
 *     "alen|T|a"          number of elements of array member a of T
 *     "bits|T|a.b|SYM"    width of bit-field a.b of T; the global SYM is a
 *                         T that is all zero except a.b, which is all ones,
 *                         so its bytes show where the compiler put the bits
 *     "base|NAME"         sizeof of a base type (short, int, long,
 *                         long_long, pointer, bool, size_t)
 *     "enum|T|NAME"       the value of enumerator NAME of enum type T
 *
 * Nothing here needs libc or relocations.
 */

#include <stddef.h>

#define ONES(w) ((1ull << (w)) - 1)

/* A chain of typedefs with qualifiers in the middle. */
typedef unsigned int u32_t;
typedef u32_t handle_t;
typedef const volatile handle_t cv_handle_t;

/* Declared here, defined only in oracle_layout_def.c: this unit's DWARF has
 * a declaration, which the oracle must pass over. */
struct only_defined_elsewhere;
typedef struct only_defined_elsewhere elsewhere_t;

/* Declared in every unit, defined in none. */
struct never_defined;

struct inner {
  char c;
  double d;
  short s;
};

struct flags {
  unsigned a : 3;
  signed b : 5;
  unsigned c : 1;
  unsigned long long wide : 40;
  unsigned char tail : 2;
};

union number {
  int i;
  double d;
  char bytes[12];
};

struct outer {
  char tag;
  struct inner inner;
  union {
    long as_long;
    struct {
      short lo;
      short hi;
    };
    void *as_ptr;
  };
  int values[7];
  struct inner pair[2][3];
  struct flags flags;
  union number num;
  cv_handle_t handle;
  elsewhere_t *elsewhere;
  struct never_defined *nowhere;
  struct {
    int x;
    int y;
  } named_anon_type;
  char name[13];
  int (*callback)(void *, int);
  struct outer *next;
  long long last;
};

typedef struct outer outer_t;
typedef outer_t outer_alias_t;

/* Enumerators of every constant form width (1, 2 and 4 bytes), declared
 * out of order. */
typedef enum colour { GREEN = 7, RED = 0, BLUE = 300, DEEP = 70000 } colour_t;
colour_t colour_in_use;

/* Every base type the oracle reports a size for. */
struct basics {
  short s;
  int i;
  long l;
  long long ll;
  _Bool b;
  size_t z;
  void *p;
};

#define M_SIZE(T, m) sizeof(((T *)0)->m)
#define M_LEN(T, m) (sizeof(((T *)0)->m) / sizeof(((T *)0)->m[0]))

#define TRUTH(X)                                                              \
  X("size|struct outer", sizeof(struct outer))                                \
  X("size|outer_t", sizeof(outer_t))                                          \
  X("size|outer_alias_t", sizeof(outer_alias_t))                              \
  X("size|struct inner", sizeof(struct inner))                                \
  X("size|struct flags", sizeof(struct flags))                                \
  X("size|union number", sizeof(union number))                                \
  X("size|number", sizeof(union number))                                      \
  X("size|cv_handle_t", sizeof(cv_handle_t))                                  \
  X("size|struct basics", sizeof(struct basics))                              \
  X("offset|struct outer|tag", offsetof(struct outer, tag))                   \
  X("offset|struct outer|inner", offsetof(struct outer, inner))               \
  X("offset|struct outer|inner.c", offsetof(struct outer, inner.c))           \
  X("offset|struct outer|inner.d", offsetof(struct outer, inner.d))           \
  X("offset|struct outer|inner.s", offsetof(struct outer, inner.s))           \
  X("offset|struct outer|as_long", offsetof(struct outer, as_long))           \
  X("offset|struct outer|lo", offsetof(struct outer, lo))                     \
  X("offset|struct outer|hi", offsetof(struct outer, hi))                     \
  X("offset|struct outer|as_ptr", offsetof(struct outer, as_ptr))             \
  X("offset|struct outer|values", offsetof(struct outer, values))             \
  X("offset|struct outer|pair", offsetof(struct outer, pair))                 \
  X("offset|struct outer|flags", offsetof(struct outer, flags))               \
  X("offset|struct outer|num", offsetof(struct outer, num))                   \
  X("offset|struct outer|num.d", offsetof(struct outer, num.d))               \
  X("offset|struct outer|num.bytes", offsetof(struct outer, num.bytes))       \
  X("offset|struct outer|handle", offsetof(struct outer, handle))             \
  X("offset|struct outer|elsewhere", offsetof(struct outer, elsewhere))       \
  X("offset|struct outer|nowhere", offsetof(struct outer, nowhere))           \
  X("offset|struct outer|named_anon_type", offsetof(struct outer,             \
                                                    named_anon_type))         \
  X("offset|struct outer|named_anon_type.y", offsetof(struct outer,           \
                                                      named_anon_type.y))     \
  X("offset|struct outer|name", offsetof(struct outer, name))                 \
  X("offset|struct outer|callback", offsetof(struct outer, callback))         \
  X("offset|struct outer|next", offsetof(struct outer, next))                 \
  X("offset|struct outer|last", offsetof(struct outer, last))                 \
  X("offset|outer_alias_t|inner.s", offsetof(outer_alias_t, inner.s))         \
  X("offset|outer_alias_t|hi", offsetof(outer_alias_t, hi))                   \
  X("offset|struct basics|z", offsetof(struct basics, z))                     \
  X("offset|struct basics|p", offsetof(struct basics, p))                     \
  X("msize|struct outer|inner", M_SIZE(struct outer, inner))                  \
  X("msize|struct outer|values", M_SIZE(struct outer, values))                \
  X("msize|struct outer|pair", M_SIZE(struct outer, pair))                    \
  X("msize|struct outer|name", M_SIZE(struct outer, name))                    \
  X("msize|struct outer|num", M_SIZE(struct outer, num))                      \
  X("msize|struct outer|handle", M_SIZE(struct outer, handle))                \
  X("msize|struct outer|callback", M_SIZE(struct outer, callback))            \
  X("msize|struct outer|as_long", M_SIZE(struct outer, as_long))              \
  X("msize|struct outer|hi", M_SIZE(struct outer, hi))                        \
  X("alen|struct outer|values", M_LEN(struct outer, values))                  \
  X("alen|struct outer|pair", M_LEN(struct outer, pair))                      \
  X("alen|struct outer|name", M_LEN(struct outer, name))                      \
  X("alen|union number|bytes", M_LEN(union number, bytes))                    \
  X("bits|struct flags|a|flags_a", 3)                                         \
  X("bits|struct flags|b|flags_b", 5)                                         \
  X("bits|struct flags|c|flags_c", 1)                                         \
  X("bits|struct flags|wide|flags_wide", 40)                                  \
  X("bits|struct flags|tail|flags_tail", 2)                                   \
  X("bits|struct outer|flags.b|outer_flags_b", 5)                             \
  X("bits|struct outer|flags.wide|outer_flags_wide", 40)                      \
  X("base|short", sizeof(short))                                              \
  X("base|int", sizeof(int))                                                  \
  X("base|long", sizeof(long))                                                \
  X("base|long_long", sizeof(long long))                                      \
  X("base|pointer", sizeof(void *))                                           \
  X("base|bool", sizeof(_Bool))                                               \
  X("base|size_t", sizeof(size_t))                                            \
  X("enum|colour_t|RED", RED)                                                 \
  X("enum|enum colour|GREEN", GREEN)                                          \
  X("enum|colour_t|BLUE", BLUE)                                               \
  X("enum|colour_t|DEEP", DEEP)

#define VALUE(name, value) (value),
#define NAME(name, value) name "\0"

const unsigned long long truth[] = {TRUTH(VALUE)};
const char truth_names[] = TRUTH(NAME);

/* All zero but one bit-field, which is all ones. */
const struct flags flags_a = {.a = ONES(3)};
const struct flags flags_b = {.b = -1};
const struct flags flags_c = {.c = ONES(1)};
const struct flags flags_wide = {.wide = ONES(40)};
const struct flags flags_tail = {.tail = ONES(2)};
const struct outer outer_flags_b = {.flags = {.b = -1}};
const struct outer outer_flags_wide = {.flags = {.wide = ONES(40)}};

/* Makes the compiler describe every type above in this unit's DWARF. */
void oracle_use(outer_alias_t *o, union number *n, struct basics *b,
                cv_handle_t *h) {
  (void)o;
  (void)n;
  (void)b;
  (void)h;
}
