#!/usr/bin/env bash
# A task from a shell script, as issue 15's "Done when" puts it: run it, read its result
# record, find its session, search it, export it, hand it off, delete both. Each step checks
# what it got with jq and says "ok: ..."; any surprise stops the script (exit 1). (jq -s and
# any(): jq 1.6's -e judges only the last input, so `select` over a stream misleads it.)
#
#   scripts/examples/script_a_run.sh "the task" WORD_TO_SEARCH_FOR OUT_DIR
set -euo pipefail
task=$1 word=$2 out=$3

# 1. Run the task; the result record is the only thing on stdout, whatever happens.
status=0
result=$(seri chat -p "$task" --output-format json) || status=$?
jq -e --argjson code "$status" '.type == "result" and .exit_status == $code' <<<"$result" >/dev/null
jq -e '.status == "done" and (.answer | length > 0) and (.cost | type == "number")' \
  <<<"$result" >/dev/null
session=$(jq -r .session <<<"$result")
echo "ok: ran the task in session $session: $(jq -r .answer <<<"$result")"

# 2. Find the session among this project's sessions.
seri sessions --json | jq -se --arg s "$session" 'any(.[]; .id == $s and .messages > 0)' >/dev/null
echo "ok: found session $session"

# 3. Search it.
hits=$(seri sessions search "$word" --json | jq -s --arg s "$session" 'map(select(.session == $s)) | length')
[ "$hits" -gt 0 ]
echo "ok: '$word' found $hits times in it"

# 4. Export it: the conversation as Markdown, the run as ATIF.
seri sessions export "$session" --format markdown >"$out/session.md"
grep -q "$word" "$out/session.md"
seri trajectory export --format atif --session "$session" >"$out/trajectory.jsonl"
jq -e '.schema_version | startswith("ATIF")' "$out/trajectory.jsonl" >/dev/null
echo "ok: exported to $out/session.md and $out/trajectory.jsonl"

# 5. Hand it off: a new session from its recap and pins.
next=$(seri handoff --session "$session")
seri sessions --json | jq -se --arg n "$next" 'any(.[]; .id == $n)' >/dev/null
echo "ok: handed off to session $next"

# 6. Delete both.
seri sessions rm "$session" "$next" --yes
left=$(seri sessions --json | jq -s --arg s "$session" --arg n "$next" \
  'map(select(.id == $s or .id == $n)) | length')
[ "$left" -eq 0 ]
echo "ok: deleted $session and $next"
