#!/usr/bin/env bash
# Writes mpihandles/src/mpich/abi_table.rs: every predefined handle of the
# MPI-5 standard ABI (`mpi_abi.h`) with the value MPICH's own `mpi.h` gives
# the same name. Both values are measured, not copied: one C program that
# prints each name's value is compiled twice, by the wheel's `mpicc_abi`
# and by its `mpicc`, and run (no MPI_Init: the values are constants).
#
#   bash scripts/write-mpi-abi-table.sh VENV           write the table
#   bash scripts/write-mpi-abi-table.sh VENV --check   fail if it differs
#
# VENV: a virtual environment with pip's MPICH 5 wheel (its include/
# mpi_abi.h, bin/mpicc_abi and bin/mpicc): scripts/python-envs.sh mpich5.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:?usage: write-mpi-abi-table.sh VENV [--check]}
check=${2:-}
for f in "$venv/include/mpi_abi.h" "$venv/bin/mpicc_abi" "$venv/bin/mpicc"; do
  [ -e "$f" ] || { echo "error: $f is missing: bash scripts/python-envs.sh mpich5 makes it" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
version=$(grep -o '^Version: .*' "$venv"/lib/python3*/site-packages/mpich-*.dist-info/METADATA | cut -d' ' -f2)
python3 - "$venv/include/mpi_abi.h" "$work/names.c" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
names = re.findall(r'#define\s+(MPI_\w+)\s+\(\((MPI_\w+)\)(0x[0-9a-fA-F]+)\)', text)
with open(sys.argv[2], 'w') as out:
    out.write('#include <mpi.h>\n#include <stdio.h>\n#include <stdint.h>\nint main(void) {\n')
    for name, kind, _ in names:
        out.write(f'  printf("{kind} {name} %llx\\n", (unsigned long long)(uintptr_t)({name}));\n')
    out.write('  return 0;\n}\n')
PY
"$venv/bin/mpicc_abi" "$work/names.c" -o "$work/abi"
"$venv/bin/mpicc" "$work/names.c" -o "$work/mpich"
"$work/abi" > "$work/abi.txt"
"$work/mpich" > "$work/mpich.txt"
python3 - "$work/abi.txt" "$work/mpich.txt" "$version" > "$work/abi_table.rs" <<'PY'
import sys
abi = [l.split() for l in open(sys.argv[1])]
mpich = [l.split() for l in open(sys.argv[2])]
# MPICH's messages are requests; sessions have no handle view (skipped).
kinds = {'MPI_Comm': 'Comm', 'MPI_Group': 'Group', 'MPI_Win': 'Win', 'MPI_File': 'File',
         'MPI_Message': 'Request', 'MPI_Info': 'Info',
         'MPI_Errhandler': 'Errhandler', 'MPI_Request': 'Request', 'MPI_Datatype': 'Datatype',
         'MPI_Op': 'Op'}
print('//! The predefined handles of the MPI-5 standard ABI, each with the value')
print("//! MPICH's own `mpi.h` gives the same name: written by")
print(f'//! `scripts/write-mpi-abi-table.sh` from pip\'s MPICH {sys.argv[3]} wheel, which')
print('//! compiles one program with its `mpicc_abi` and its `mpicc` (checked by')
print('//! `mpihandles/tests/mpi_abi_table.rs`). Do not edit by hand.')
print()
print('use crate::model::HandleKind;')
print()
print('/// (kind, value in `mpi_abi.h`, value in MPICH\'s `mpi.h`, name), for')
print('/// every kind a handle view shows (`MPI_Message` as MPICH\'s requests).')
print('pub(crate) const ABI_PREDEFINED: &[(HandleKind, u16, u32, &str)] = &[')
for (kind, name, a), (kind2, name2, m) in zip(abi, mpich):
    assert (kind, name) == (kind2, name2)
    if kind not in kinds:
        continue
    m = int(m, 16) & 0xffffffff
    print(f'    (HandleKind::{kinds[kind]}, {int(a, 16):#x}, {m:#x}, "{name}"),')
print('];')
PY
target=mpihandles/src/mpich/abi_table.rs
if [ "$check" = --check ]; then
  if ! diff -u "$target" "$work/abi_table.rs"; then
    echo "error: $target is not what the wheel's headers give: bash scripts/write-mpi-abi-table.sh $venv" >&2
    exit 1
  fi
  echo "$target: $(grep -c 'HandleKind::' "$target") handles, as the wheel's headers give"
else
  cp "$work/abi_table.rs" "$target"
  echo "wrote $target"
fi
