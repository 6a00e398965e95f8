# Sourced by the end-to-end scripts of bad input: `expect NAME MESSAGE -- COMMAND...` runs the
# command and counts a failure in $failures unless it exits with code 2 and prints MESSAGE.
# Needs $work (a scratch folder) and failures=0 set by the caller.
expect() {
  local name=$1 message=$2
  shift 3
  "$@" > "$work/out.log" 2>&1
  local status=$?
  if [ "$status" -ne 2 ] || ! grep -qF -- "$message" "$work/out.log"; then
    echo "FAIL $name: exit $status, expected 2 and '$message'"; sed 's/^/    /' "$work/out.log" | head -20
    failures=$((failures + 1))
  else
    echo "ok   $name"
  fi
}
