#!/usr/bin/env bash
# Installs imgctl for the GitHub Action in action.yml (its first step) and
# puts it on the job's PATH. The one place that knows the release assets'
# names: `make release` publishes, per tag vX.Y.Z,
#
#   imgctl_X.Y.Z_<os>_<arch>.tar.gz   (windows: .zip), holding imgctl[.exe]
#   checksums.txt                     sha256sum format: "<hex>  <asset>"
#
# with os linux|darwin|windows and arch amd64|arm64.
#
# Environment (the action's inputs and the runner's variables):
#   IMGCTL_VERSION            release to install: latest (default), vX.Y.Z or X.Y.Z
#   IMGCTL_BUILD_FROM_SOURCE  true: go build ./cmd/imgctl in IMGCTL_SOURCE_DIR instead, with
#                             the release's flags (CGO_ENABLED=0, -trimpath)
#   IMGCTL_SOURCE_DIR         the source tree (default $GITHUB_ACTION_PATH)
#   IMGCTL_DOWNLOAD_URL       release downloads (default
#                             https://github.com/$GITHUB_ACTION_REPOSITORY/releases/download,
#                             imgctl/imgctl when the action is local); assets are
#                             fetched from $IMGCTL_DOWNLOAD_URL/<tag>/<asset>, and
#                             latest from the redirect of $IMGCTL_DOWNLOAD_URL/../latest
#   RUNNER_TEMP, RUNNER_OS (Linux|macOS|Windows), RUNNER_ARCH (X64|ARM64),
#   GITHUB_PATH, GITHUB_OUTPUT
#
# Writes the outputs version (X.Y.Z, or "source") and path (the binary).
# Run it locally with those variables set: the tests in internal/testing/workflows do.
set -euo pipefail

fail() {
	echo "imgctl install: $*" >&2
	exit 1
}

for v in RUNNER_TEMP RUNNER_OS RUNNER_ARCH GITHUB_PATH GITHUB_OUTPUT; do
	[ -n "${!v:-}" ] || fail "$v is not set (this script runs as a step of the imgctl action)"
done

# release_platform: the archive name's tail for this runner's platform,
# "_<os>_<arch>.<ext>", in the variable platform. It sets a variable rather
# than printing, so that fail stops the script (bash 3 on macOS has no
# inherit_errexit for command substitutions).
release_platform() {
	local os arch ext=tar.gz
	case "$RUNNER_OS" in
	Linux) os=linux ;;
	macOS) os=darwin ;;
	Windows) os=windows ext=zip ;;
	*) fail "no imgctl release for runner OS $RUNNER_OS (releases exist for Linux, macOS and Windows; use build-from-source)" ;;
	esac
	case "$RUNNER_ARCH" in
	X64) arch=amd64 ;;
	ARM64) arch=arm64 ;;
	*) fail "no imgctl release for runner architecture $RUNNER_ARCH (releases exist for X64 and ARM64; use build-from-source)" ;;
	esac
	platform="_${os}_${arch}.${ext}"
}

sha256() {
	if command -v sha256sum >/dev/null 2>&1; then
		sha256sum "$1" | cut -d' ' -f1
	else
		shasum -a 256 "$1" | cut -d' ' -f1 # macOS runners
	fi
}

download() { # URL FILE
	curl -fsSL --retry 3 --retry-connrefused -o "$2" "$1"
}

# latest_tag: the tag GitHub's releases/latest redirects to (.../releases/tag/<tag>).
# The redirect needs no API token and has no API rate limit.
latest_tag() {
	local url
	url=$(curl -fsSL --retry 3 --retry-connrefused -o /dev/null -w '%{url_effective}' "${download_url%/download}/latest") ||
		fail "finding the latest release at ${download_url%/download}/latest failed"
	case "$url" in
	*/releases/tag/*) echo "${url##*/releases/tag/}" ;;
	*) fail "the latest release did not redirect to a tag (got $url): is there a published release?" ;;
	esac
}

# unpack_zip ZIP DIR: unzip, or the 7-Zip GitHub's Windows images carry
# when Git Bash has no unzip.
unpack_zip() {
	if command -v unzip >/dev/null 2>&1; then
		unzip -q "$1" -d "$2"
	elif command -v 7z >/dev/null 2>&1; then
		7z x -y -bd -o"$2" "$1" >/dev/null
	else
		echo "neither unzip nor 7z is installed" >&2
		return 1
	fi
}

# verify_checksum SUMS ASSET FILE: FILE's sha256 is SUMS's entry for ASSET.
verify_checksum() {
	local want got
	want=$(awk -v a="$2" '{ n = $2; sub(/^\*/, "", n) } n == a { print $1; exit }' "$1")
	[ -n "$want" ] || fail "checksums.txt of the release has no entry for $2"
	got=$(sha256 "$3")
	[ "$want" = "$got" ] || fail "checksum mismatch for $2: checksums.txt says $want, the download is $got"
}

exe=imgctl
[ "$RUNNER_OS" = Windows ] && exe=imgctl.exe
bin_dir="$RUNNER_TEMP/imgctl-bin"
# marker names what bin_dir holds, so that later uses of the action in the
# same job install nothing again.
marker="$bin_dir/.installed"
mkdir -p "$bin_dir"

if [ "${IMGCTL_BUILD_FROM_SOURCE:-false}" = true ]; then
	src="${IMGCTL_SOURCE_DIR:-${GITHUB_ACTION_PATH:-}}"
	[ -n "$src" ] || fail "IMGCTL_SOURCE_DIR and GITHUB_ACTION_PATH are empty: no source tree to build"
	version=source
	if [ -x "$bin_dir/$exe" ] && [ "$(cat "$marker" 2>/dev/null)" = "source $src" ]; then
		echo "imgctl from $src is already built in $bin_dir"
	else
		echo "building imgctl from $src"
		# The release's flags (make release): a static binary without the
		# runner's paths in it, the same as the published one.
		(cd "$src" && CGO_ENABLED=0 go build -trimpath -o "$bin_dir/$exe" ./cmd/imgctl) ||
			fail "go build ./cmd/imgctl in $src failed"
		echo "source $src" >"$marker"
	fi
else
	repo="${GITHUB_ACTION_REPOSITORY:-}"
	download_url="${IMGCTL_DOWNLOAD_URL:-https://github.com/${repo:-imgctl/imgctl}/releases/download}"
	download_url="${download_url%/}"
	release_platform
	tag="${IMGCTL_VERSION:-latest}"
	if [ "$tag" = latest ]; then
		tag=$(latest_tag)
	fi
	version="${tag#v}"
	[[ "$version" =~ ^[0-9][0-9A-Za-z.+-]*$ ]] || fail "version \"${IMGCTL_VERSION:-$tag}\" is not latest or a release version such as v1.2.0"
	tag="v$version"
	asset="imgctl_${version}${platform}"
	if [ -x "$bin_dir/$exe" ] && [ "$(cat "$marker" 2>/dev/null)" = "$download_url/$tag/$asset" ]; then
		echo "imgctl $version is already installed in $bin_dir"
	else
		work=$(mktemp -d "$RUNNER_TEMP/imgctl-download.XXXXXX")
		trap 'rm -rf "$work"' EXIT
		echo "downloading $download_url/$tag/$asset"
		download "$download_url/$tag/checksums.txt" "$work/checksums.txt" ||
			fail "downloading $download_url/$tag/checksums.txt failed: is $tag a published release?"
		download "$download_url/$tag/$asset" "$work/$asset" ||
			fail "downloading $download_url/$tag/$asset failed: release $tag has no asset for $RUNNER_OS/$RUNNER_ARCH?"
		verify_checksum "$work/checksums.txt" "$asset" "$work/$asset"
		mkdir "$work/x"
		case "$asset" in
		*.zip) unpack_zip "$work/$asset" "$work/x" || fail "unpacking $asset failed" ;;
		*) tar -xzf "$work/$asset" -C "$work/x" || fail "unpacking $asset failed" ;;
		esac
		# The binary sits at the archive's root, or in its one top directory.
		found=$(find "$work/x" -type f -name "$exe")
		if [ -z "$found" ] || [ "$(printf '%s\n' "$found" | wc -l)" -ne 1 ]; then
			fail "$asset holds no single $exe (found: ${found:-nothing})"
		fi
		mv -f "$found" "$bin_dir/$exe"
		chmod +x "$bin_dir/$exe"
		echo "$download_url/$tag/$asset" >"$marker"
	fi
fi

echo "$bin_dir" >>"$GITHUB_PATH"
{
	echo "version=$version"
	echo "path=$bin_dir/$exe"
} >>"$GITHUB_OUTPUT"
echo "imgctl $version installed at $bin_dir/$exe"
