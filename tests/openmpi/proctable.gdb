# Print MPIR_proctable of an Open MPI 4.1 mpirun (no debug info needed).
# Live:  gdb -batch -nx -p MPIRUN_PID -x proctable.gdb
# Core:  gdb -batch -nx /usr/bin/orterun CORE -x proctable.gdb
# MPIR_PROCDESC = { char *host_name; char *executable_name; int pid; } (24 bytes on x86_64)
set $t = (long *) MPIR_proctable
set $n = (int) MPIR_proctable_size
set $i = 0
while $i < $n
  printf "[%d] host=%s exe=%s pid=%d\n", $i, (char *) $t[$i*3], (char *) $t[$i*3+1], *(int *) &$t[$i*3+2]
  set $i = $i + 1
end
