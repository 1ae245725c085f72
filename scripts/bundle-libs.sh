#!/bin/sh
# bundle-libs.sh [--all] DEST PROGRAM... - copies into DEST every shared
# library the programs load that a stock Ubuntu 24.04 + CUDA image does not
# have (the list of stock ones is below; CUDA's own come from the toolkit
# and the driver on the GPU machine).  --all: every library but the C
# runtime's own (glibc, libgcc_s), for a bundle that must run wherever the
# glibc is as new as the build machine's (make fuzz-dist).
set -eu
stock='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libresolv|libgcc_s|libstdc\+\+|libz|libncursesw|libtinfo|libcrypto|libssl|libnvrtc|libnvrtc-builtins|libnvJitLink|libcuda|libcupti|libnvidia-ml)\.'
if [ "$1" = --all ]; then
	stock='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libresolv|libgcc_s)\.'
	shift
fi
dest=$1
shift
ldd "$@" 2>/dev/null | awk '/=> \// { print $1, $3 }' | sort -u | while read -r name path; do
	if ! echo "$name" | grep -Eq "$stock"; then
		cp -L "$path" "$dest/$name"
		echo "BUNDLE $name"
	fi
done
