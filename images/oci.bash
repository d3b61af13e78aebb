# Shared by the image builders of this directory (sourced, not run): OCI
# image archives made offline with bash, GNU tar, sha256sum and jq,
# deterministic (fixed mtimes, owners and order), rebuilt only when their
# inputs change (a stamp file next to each archive records them).
#
# The sourcing script sets OUT_DIR (where NAME.tar goes) first; this file
# makes it, a scratch directory WORK under it (removed at exit) and sets ARCH
# (the image architecture, in Go's names).

for tool in tar sha256sum jq; do
	command -v "$tool" >/dev/null || {
		echo "images: $tool not found (run hack/install-deps)" >&2
		exit 1
	}
done

case $(uname -m) in
x86_64) ARCH=amd64 ;;
aarch64) ARCH=arm64 ;;
*) ARCH=$(uname -m) ;;
esac

umask 022
mkdir -p "$OUT_DIR"
WORK=$(mktemp -d "$OUT_DIR/.work.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# Deterministic tar: same inputs, same bytes.
dtar() {
	tar --format=gnu --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner "$@"
}

sha256_of() {
	local sum
	sum=$(sha256sum "$1")
	echo "${sum%% *}"
}

# add_blob LAYOUT FILE: moves FILE into LAYOUT/blobs/sha256, prints its digest.
add_blob() {
	local layout=$1 file=$2 digest
	digest=$(sha256_of "$file")
	mkdir -p "$layout/blobs/sha256"
	mv "$file" "$layout/blobs/sha256/$digest"
	echo "$digest"
}

# build_image NAME IMAGE ROOTFS CONFIG_JSON
# Writes $OUT_DIR/NAME.tar: an OCI layout holding ROOTFS as one uncompressed
# layer. CONFIG_JSON is the image config's "config" object (Entrypoint, Cmd, ...).
build_image() {
	local name=$1 image=$2 rootfs=$3 config=$4
	local layout=$WORK/$name-layout tag=${2##*:}
	local layer_digest layer_size config_digest config_size manifest_digest manifest_size

	mkdir -p "$layout"
	dtar -C "$rootfs" -cf "$WORK/layer.tar" .
	layer_size=$(stat -c %s "$WORK/layer.tar")
	layer_digest=$(add_blob "$layout" "$WORK/layer.tar")

	jq -n -c --arg arch "$ARCH" --arg diff "sha256:$layer_digest" --argjson config "$config" \
		--arg by "ckubelet images/${0##*/}" '{
			created: "1970-01-01T00:00:00Z",
			architecture: $arch,
			os: "linux",
			config: $config,
			rootfs: {type: "layers", diff_ids: [$diff]},
			history: [{created: "1970-01-01T00:00:00Z", created_by: $by}]
		}' >"$WORK/config.json"
	config_size=$(stat -c %s "$WORK/config.json")
	config_digest=$(add_blob "$layout" "$WORK/config.json")

	jq -n -c --arg cd "sha256:$config_digest" --argjson cs "$config_size" \
		--arg ld "sha256:$layer_digest" --argjson ls "$layer_size" '{
			schemaVersion: 2,
			mediaType: "application/vnd.oci.image.manifest.v1+json",
			config: {mediaType: "application/vnd.oci.image.config.v1+json", digest: $cd, size: $cs},
			layers: [{mediaType: "application/vnd.oci.image.layer.v1.tar", digest: $ld, size: $ls}]
		}' >"$WORK/manifest.json"
	manifest_size=$(stat -c %s "$WORK/manifest.json")
	manifest_digest=$(add_blob "$layout" "$WORK/manifest.json")

	jq -n -c --arg md "sha256:$manifest_digest" --argjson ms "$manifest_size" \
		--arg arch "$ARCH" --arg image "$image" --arg tag "$tag" '{
			schemaVersion: 2,
			mediaType: "application/vnd.oci.image.index.v1+json",
			manifests: [{
				mediaType: "application/vnd.oci.image.manifest.v1+json",
				digest: $md,
				size: $ms,
				platform: {architecture: $arch, os: "linux"},
				annotations: {
					"io.containerd.image.name": $image,
					"org.opencontainers.image.ref.name": $tag
				}
			}]
		}' >"$layout/index.json"
	echo '{"imageLayoutVersion":"1.0.0"}' >"$layout/oci-layout"

	dtar -C "$layout" -cf "$WORK/$name.tar" oci-layout index.json blobs
	mv -f "$WORK/$name.tar" "$OUT_DIR/$name.tar"
	echo "${0##*/}: $image -> $OUT_DIR/$name.tar (manifest sha256:$manifest_digest)"
}

# up_to_date NAME INPUTS: true when NAME.tar exists and was built from INPUTS.
up_to_date() {
	local stamp=$OUT_DIR/.$1.stamp
	[[ -f $OUT_DIR/$1.tar && -f $stamp ]] && [[ $(<"$stamp") == "$2" ]]
}
write_stamp() {
	echo "$2" >"$OUT_DIR/.$1.stamp"
}

# busybox_rootfs ROOT BUSYBOX_BIN: a minimal root filesystem in ROOT: the
# static BUSYBOX_BIN as /bin/busybox with a link per applet, the usual
# directories with their modes, root and nobody in /etc/passwd and /etc/group.
busybox_rootfs() {
	local root=$1 bin=$2 applet
	mkdir -p "$root/bin" "$root/etc" "$root/root" "$root/home" "$root/dev" "$root/proc" "$root/sys"
	install -d -m 1777 "$root/tmp"
	install -d -m 0755 "$root/var" "$root/var/tmp" "$root/usr/bin" "$root/usr/sbin" "$root/sbin"
	chmod 1777 "$root/var/tmp"
	chmod 0700 "$root/root"
	install -m 0755 "$bin" "$root/bin/busybox"
	while read -r applet; do
		[[ -n $applet && $applet != busybox && $applet != */* ]] || continue
		ln -s busybox "$root/bin/$applet"
	done < <("$bin" --list | LC_ALL=C sort)
	cat >"$root/etc/passwd" <<-'PASSWD'
		root:x:0:0:root:/root:/bin/sh
		nobody:x:65534:65534:nobody:/nonexistent:/bin/false
	PASSWD
	cat >"$root/etc/group" <<-'GROUP'
		root:x:0:
		nobody:x:65534:
	GROUP
	chmod 0644 "$root/etc/passwd" "$root/etc/group"
}

# busybox_inputs BUSYBOX_BIN: what an image made by busybox_rootfs depends on.
busybox_inputs() {
	local applets_sum
	applets_sum=$("$1" --list | LC_ALL=C sort | sha256sum)
	echo "busybox=$(sha256_of "$1") applets=${applets_sum%% *}"
}

# file_is_static FILE: FILE has no program interpreter (a dynamic binary would
# not run in an image without a libc).
file_is_static() {
	local headers
	headers=$(LC_ALL=C readelf -l "$1" 2>/dev/null) || return 0 # no readelf: trust it
	[[ $headers != *INTERP* ]]
}

# dynamic_closure FILE...: FILE and every shared object it loads (ldd), the
# dynamic loader included, as absolute paths, one per line, sorted.
dynamic_closure() {
	local f
	for f in "$@"; do
		echo "$f"
		LC_ALL=C ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'
	done | LC_ALL=C sort -u
}

# copy_with_libs ROOT FILE...: each FILE and the shared objects it loads into
# ROOT at their own paths (symbolic links resolved: the file is copied under
# its name), for a Debian program in an image that has no libc of its own.
copy_with_libs() {
	local root=$1 path
	shift
	while read -r path; do
		install -D -m 0755 "$(readlink -f "$path")" "$root$path"
	done < <(dynamic_closure "$@")
}

# closure_inputs FILE...: what an image holding copy_with_libs FILE... depends on.
closure_inputs() {
	local sum
	sum=$(dynamic_closure "$@" | while read -r path; do sha256_of "$(readlink -f "$path")"; done | sha256sum)
	echo "closure=${sum%% *}"
}
