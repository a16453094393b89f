#!/usr/bin/env bash
# Runs one imgctl verb for the GitHub Action in action.yml (its last step),
# with the imgctl that install.sh put on the PATH.
#
# Environment (the action's inputs):
#   IMGCTL_COMMAND           the verb, e.g. build, verify, "index create"
#   IMGCTL_ARGS              its arguments, one per line (write flags as --flag=value);
#                            blank lines are skipped; no shell expansion happens
#   IMGCTL_GITHUB_OUTPUT     true (default): imgctl runs with GITHUB_ACTIONS=true
#                            (annotations, step summary); false: without them
#   IMGCTL_FAIL_ON_FINDINGS  true (default): exit 1 (findings) fails the step;
#                            false: only exit 2 (usage, registry errors) does
#   IMGCTL_OUTPUT_FILE       also write imgctl's stdout to this file
#   RUNNER_TEMP, GITHUB_OUTPUT
#
# Writes the outputs exit-code, and for build and bake metadata-file
# (imgctl's --metadata-file, a temporary file unless the arguments name
# one), and for build digest (the index digest, read from it).
set -euo pipefail

fail() {
	echo "imgctl action: $*" >&2
	exit 2
}

for v in RUNNER_TEMP GITHUB_OUTPUT; do
	[ -n "${!v:-}" ] || fail "$v is not set (this script runs as a step of the imgctl action)"
done

read -r -a cmd <<<"${IMGCTL_COMMAND:-}"
[ "${#cmd[@]}" -gt 0 ] || fail "no command given"
for word in "${cmd[@]}"; do
	[[ "$word" =~ ^[a-z][a-z-]*$ ]] || fail "command \"$IMGCTL_COMMAND\" is not an imgctl verb (put flags in args)"
done

# ${args[@]+"${args[@]}"}: an empty array is "unbound" to bash 3 (macOS).
args=()
while IFS= read -r line || [ -n "$line" ]; do
	line="${line#"${line%%[![:space:]]*}"}" # trim leading
	line="${line%"${line##*[![:space:]]}"}" # and trailing whitespace
	if [ -n "$line" ]; then
		args+=("$line")
	fi
done <<<"${IMGCTL_ARGS:-}"

metadata=""
if [ "${cmd[0]}" = build ] || [ "${cmd[0]}" = bake ]; then
	for i in ${args[@]+"${!args[@]}"}; do
		case "${args[$i]}" in
		--metadata-file=*) metadata="${args[$i]#--metadata-file=}" ;;
		--metadata-file) metadata="${args[$((i + 1))]:-}" ;;
		esac
	done
	if [ -z "$metadata" ]; then
		metadata=$(mktemp "$RUNNER_TEMP/imgctl-metadata.XXXXXX")
		args+=("--metadata-file=$metadata")
	fi
fi

if [ "${IMGCTL_GITHUB_OUTPUT:-true}" = true ]; then
	export GITHUB_ACTIONS=true
else
	unset GITHUB_ACTIONS GITHUB_STEP_SUMMARY
fi

echo "imgctl ${cmd[*]} ${args[*]+"${args[*]}"}"
set +e
if [ -n "${IMGCTL_OUTPUT_FILE:-}" ]; then
	imgctl "${cmd[@]}" ${args[@]+"${args[@]}"} | tee "$IMGCTL_OUTPUT_FILE"
	code=${PIPESTATUS[0]}
else
	imgctl "${cmd[@]}" ${args[@]+"${args[@]}"}
	code=$?
fi
set -e

echo "exit-code=$code" >>"$GITHUB_OUTPUT"
if [ -n "$metadata" ]; then
	echo "metadata-file=$metadata" >>"$GITHUB_OUTPUT"
	if [ "$code" -eq 0 ] && [ "${cmd[0]}" = build ]; then
		# The file is imgctl's: {"index": {"ref": ..., "digest": ...}, ...},
		# index first (bake's is keyed by target: no one digest). Read
		# without jq, which not every runner has.
		digest=$(tr -d ' \t\r\n' <"$metadata" | sed -n 's/^{"index":{[^}]*"digest":"\([^"]*\)".*/\1/p')
		[ -n "$digest" ] || fail "no index digest in $metadata"
		echo "digest=$digest" >>"$GITHUB_OUTPUT"
	fi
fi

case "$code" in
0) ;;
1)
	if [ "${IMGCTL_FAIL_ON_FINDINGS:-true}" = true ]; then
		echo "imgctl ${cmd[*]} reported findings (exit 1)" >&2
		exit 1
	fi
	echo "imgctl ${cmd[*]} reported findings (exit 1); fail-on-findings is false"
	;;
*)
	echo "imgctl ${cmd[*]} failed (exit $code)" >&2
	exit "$code"
	;;
esac
