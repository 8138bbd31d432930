# Prints every frame of every thread of the loaded program or core, one line
# each, for tests/stacks.rs to compare against:
#   thread TID
#   frame KIND PC FUNCTION FILE LINE
# KIND is "inline" for a frame gdb made up for an inlined call (it shares
# the physical frame of the next one) and "normal" otherwise. FUNCTION,
# FILE and LINE are "-" when gdb does not know them. Frame 0's PC is the
# thread's pc; the others' are return addresses.
import gdb

for thread in sorted(gdb.selected_inferior().threads(), key=lambda t: t.ptid[1]):
    thread.switch()
    print("thread %d" % thread.ptid[1])
    frame = gdb.newest_frame()
    while frame is not None:
        kind = "inline" if frame.type() == gdb.INLINE_FRAME else "normal"
        sal = frame.find_sal()
        name = frame.name() or "-"
        path = sal.symtab.filename if sal.symtab is not None else "-"
        line = sal.line if sal.symtab is not None and sal.line else "-"
        print("frame %s %#x %s %s %s" % (kind, frame.pc(), name, path, line))
        try:
            frame = frame.older()
        except gdb.error:
            frame = None
