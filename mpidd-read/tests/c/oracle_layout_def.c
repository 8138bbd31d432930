/*
 * The second unit of the type-oracle fixture (see oracle_layout.c, which is
 * linked first): the only definition of struct only_defined_elsewhere.
 * This unit has no typedef elsewhere_t, so finding `elsewhere_t` means
 * following oracle_layout.c's typedef to its declaration and then looking
 * for the definition in another unit. The format of truth_def and
 * truth_def_names is that of truth and truth_names in oracle_layout.c.
 */

#include <stddef.h>

struct only_defined_elsewhere {
  int id;
  char label[5];
  struct only_defined_elsewhere *self;
  double weight;
};

#define TRUTH(X)                                                              \
  X("size|struct only_defined_elsewhere",                                     \
    sizeof(struct only_defined_elsewhere))                                    \
  X("size|elsewhere_t", sizeof(struct only_defined_elsewhere))                \
  X("offset|elsewhere_t|label", offsetof(struct only_defined_elsewhere,       \
                                         label))                              \
  X("offset|elsewhere_t|self", offsetof(struct only_defined_elsewhere, self)) \
  X("offset|elsewhere_t|weight", offsetof(struct only_defined_elsewhere,      \
                                          weight))                            \
  X("alen|elsewhere_t|label", 5)

#define VALUE(name, value) (value),
#define NAME(name, value) name "\0"

const unsigned long long truth_def[] = {TRUTH(VALUE)};
const char truth_def_names[] = TRUTH(NAME);

void oracle_use_def(struct only_defined_elsewhere *e) { (void)e; }
