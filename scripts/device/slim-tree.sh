#!/usr/bin/env bash
# The device tool copies the working tree (tracked and untracked-not-ignored files plus what is carried) and
# refuses more than 64 MiB; tests/data and the built-in model's weights alone are ~55 MB. Device runs that need
# neither (the SD 1.5 check, training, benches) hide them for the duration of the call:
#   scripts/device/slim-tree.sh on    # untrack them in the index and ignore them (the files stay in place)
#   scripts/device/slim-tree.sh data  # the same for tests/data only (runs that use the built-in model)
#   scripts/device/slim-tree.sh model # the built-in model only (runs that use tests/data)
#   scripts/device/slim-tree.sh off   # restore the index from HEAD and drop the ignore lines
# Never commit while it is on: the index then records them as deleted.
set -euo pipefail
cd "$(dirname "$0")/../.."
exclude=$(git rev-parse --git-path info/exclude)
if [ "${1:-}" = on ]; then
  git rm -r --cached -q tests/data models/builtin/sdgen-tiny
  printf '/tests/data/\n/models/builtin/sdgen-tiny/\n' >> "$exclude"
elif [ "${1:-}" = data ]; then
  git rm -r --cached -q tests/data
  printf '/tests/data/\n' >> "$exclude"
elif [ "${1:-}" = model ]; then   # the built-in model only (runs of the parity tests on tests/data)
  git rm -r --cached -q models/builtin/sdgen-tiny
  printf '/models/builtin/sdgen-tiny/\n' >> "$exclude"
elif [ "${1:-}" = off ]; then
  sed -i '\#^/tests/data/$#d;\#^/models/builtin/sdgen-tiny/$#d' "$exclude"
  git reset -q -- tests/data models/builtin/sdgen-tiny 2>/dev/null || git reset -q -- tests/data
else
  echo "usage: $0 on|data|model|off" >&2
  exit 2
fi
