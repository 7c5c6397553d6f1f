#!/usr/bin/env bash
# Fails when a test sleeps outside the reasoned allow-list
# (tests/sleep_allowlist.txt): tests wait on events or poll with a deadline
# (tests/testing/poll.h), so a loaded CI machine cannot fail them. Matches
# sleep_for, usleep, time.sleep and sleep( in every file under tests/.
set -euo pipefail
cd "$(dirname "$0")/.."
allow=$(grep -v '^\s*#' tests/sleep_allowlist.txt | awk 'NF {print $1}')
status=0
while IFS= read -r hit; do
  file=${hit%%:*}
  if ! grep -qxF "$file" <<< "$allow"; then
    echo "check_no_sleeps: $hit" >&2
    status=1
  fi
done < <(grep -rnE 'sleep_for|usleep|time\.sleep|\bsleep\(' tests/ --include='*.cc' --include='*.h' --include='*.py' --include='*.sh' || true)
for file in $allow; do
  [ -f "$file" ] || { echo "check_no_sleeps: allow-listed $file does not exist" >&2; status=1; }
done
if [ "$status" -ne 0 ]; then
  echo "check_no_sleeps: tests must not sleep to synchronize; wait on an event or use testing::PollUntil" \
       "(tests/testing/poll.h), or add the file with its reason to tests/sleep_allowlist.txt" >&2
fi
exit "$status"
