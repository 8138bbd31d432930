# Reads every MPIR_proctable entry of a core with gdb's Python API: the
# baseline scripts/bench-1m-table.sh compares mpidd with. LP64 only.
import gdb
n = int(gdb.parse_and_eval("*(int*)&MPIR_proctable_size"))
t = gdb.parse_and_eval("*(char***)&MPIR_proctable")
out = []
for i in range(n):
    host = t[3 * i].string()
    exe = t[3 * i + 1].string()
    pid = int((t + 3 * i + 2).cast(gdb.lookup_type("int").pointer()).dereference())
    out.append((host, exe, pid))
print(len(out), out[0], out[-1])
