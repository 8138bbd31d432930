/* Opens the shared library named by argv[1] only when told to, then
 * closes it when told again: a process whose loaded objects change while
 * a reader holds it (mpidd-read/tests/live_refresh.rs). Each step is one
 * line read on stdin and answered on stdout. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
  char line[16];
  if (argc < 2)
    return 2;
  setvbuf(stdout, NULL, _IONBF, 0);
  puts("ready");
  if (!fgets(line, sizeof line, stdin))
    return 1;
  void *lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) {
    printf("dlopen: %s\n", dlerror());
    return 1;
  }
  puts("loaded");
  if (!fgets(line, sizeof line, stdin))
    return 1;
  dlclose(lib);
  puts("closed");
  if (!fgets(line, sizeof line, stdin))
    return 1;
  return 0;
}
