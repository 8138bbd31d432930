#!/usr/bin/env bash
# Keeps the tree's shape (docs/ARCHITECTURE.md): no source file outside the
# tests grows past MAX_LINES (default 850; split it along a seam), and no
# file points at the project's internal tracker, whose numbers a reader of
# the repository cannot look up.
#
#   bash scripts/check-tree.sh
set -euo pipefail
cd "$(dirname "$0")/.."
max="${MAX_LINES:-850}"
status=0
# Tests and test programs are exempt: a test file holds one scenario's cases.
while IFS= read -r file; do
  lines=$(wc -l <"$file")
  if [ "$lines" -gt "$max" ]; then
    echo "error: $file has $lines lines (more than $max): split it where it has a seam" >&2
    status=1
  fi
done < <(git ls-files '*.rs' | grep -Ev '(^|/)tests/')
# "issue 12", "task #3" and the like; upstream references (ompi#6464) name
# their project and are fine.
if git grep -nIiE '\b(issue|task)s? ?#?[0-9]+\b' -- . ':!*.json' ':!*.core' ':!scripts/check-tree.sh' \
  | grep -viE 'srun: error: [^ ]+: task [0-9]|n[0-9]+: task [0-9]|task [0-9]+.s record'; then
  echo "error: the lines above name an internal tracker number: name the feature instead" >&2
  status=1
fi
exit "$status"
