#!/usr/bin/env bash
# Regenerate the embedded default corpus (data_prep/default_corpus/{train,valid,test}.txt) from
# Debian's bible-kjv-text package: the King James Version of the Bible, which is in the public
# domain.
#
#   bash data_prep/default_corpus/make.sh            # rewrite data_prep/default_corpus/*.txt
#   bash data_prep/default_corpus/make.sh OUT_DIR    # write the three files into OUT_DIR instead
#                                                    # (refused if one of them exists there)
#   bash data_prep/default_corpus/make.sh --check    # regenerate into a temp dir and compare with
#                                                    # the committed files (exit 1 if they differ)
#
# Needs: a Debian-based system with apt lists present (run `apt-get update` once), dpkg, python3.
#
# The text package stores the Bible in a compressed, random-access format that only the
# `bible` program of the companion bible-kjv package can read, so both packages are fetched with
# `apt-get download` (nothing is installed) and unpacked with `dpkg -x` into a temp dir; the
# program then prints Genesis 1:1 to 2 Kings 25:30, one verse per line, and kjv_to_corpus.py
# tokenises and splits that text. Genesis..2 Kings (12 books, ~10k verses, ~1.6 MB) keeps the
# corpus under 2 MB while staying one continuous narrative.
set -euo pipefail

PKG_VERSION=4.38
TEXT_PKG=bible-kjv-text
TEXT_DEB_SHA256=d61b6aad4c51ba9e2800b825325fa6a09e99a0d02a9bb6dc4724fcc4995a1b7a
PROG_PKG=bible-kjv
# The program package is architecture-specific; its hash is recorded for amd64 only. On other
# architectures it is not verified, but the output files are still checked against README.md
# with --check, and the text itself comes from the verified (architecture-independent) package.
PROG_DEB_SHA256_AMD64=75a49c032a6efa9faa2beb4a9acb70974380122906329d0e100de36cc88ff02d
VERSE_RANGE="Gen1:1-2Ki25:30"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=data_prep/lib/common.sh
. "$here/../lib/common.sh"
SPLIT_FILES=(train.txt valid.txt test.txt)

check=0
flags=("--check check=1" "+ words") words=()
parse_flags flags "$@"
[ "${#words[@]}" -le 1 ] || die "expected at most one argument (OUT_DIR), got ${#words[@]}"
out_dir="${words[0]:-}"
[ -z "$out_dir" ] || refuse_existing "$out_dir" "${SPLIT_FILES[@]}"  # fail before downloading

for tool in apt-get dpkg dpkg-deb sha256sum python3; do
    command -v "$tool" >/dev/null 2>&1 || die "'$tool' not found; this script needs a Debian-based system"
done

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT  # our own temporary directory

verify_sha256() {  # file expected
    local got
    got="$(sha256sum "$1" | cut -d' ' -f1)"
    [ "$got" = "$2" ] || die "sha256 of $(basename "$1") is $got, expected $2 (a different build of the package?)"
    log "sha256 ok: $(basename "$1")"
}

log "downloading $TEXT_PKG=$PKG_VERSION and $PROG_PKG=$PKG_VERSION into $work"
# apt-get download writes into the current directory. When run as root it warns that the _apt
# user cannot write there; that is harmless.
(cd "$work" && apt-get download "$TEXT_PKG=$PKG_VERSION" "$PROG_PKG=$PKG_VERSION") \
    || die "apt-get download failed; run 'apt-get update' first (version $PKG_VERSION must be in the apt lists)"

text_deb="$(ls "$work/${TEXT_PKG}_${PKG_VERSION}_all.deb")"
prog_deb="$(ls "$work/${PROG_PKG}_${PKG_VERSION}_"*.deb)"
verify_sha256 "$text_deb" "$TEXT_DEB_SHA256"
arch="$(dpkg-deb -f "$prog_deb" Architecture)"
if [ "$arch" = amd64 ]; then
    verify_sha256 "$prog_deb" "$PROG_DEB_SHA256_AMD64"
else
    log "note: $PROG_PKG is the $arch build; its sha256 is not recorded (only amd64's is)"
fi

dpkg -x "$text_deb" "$work/root"
dpkg -x "$prog_deb" "$work/root"
[ -f "$work/root/usr/lib/bible.data" ] || die "$TEXT_PKG did not contain usr/lib/bible.data"

log "extracting $VERSE_RANGE"
# -f turns pretty-printing off: one "RefC:V text" line per verse. -p points the program at the
# unpacked data instead of /usr/lib. stdin is closed so it can never wait for interactive input.
"$work/root/usr/bin/bible" -f -p "$work/root/usr/lib" "$VERSE_RANGE" </dev/null >"$work/verses.txt" \
    || die "the bible program failed (is libreadline8 installed?)"

python3 "$here/kjv_to_corpus.py" "$work/out" <"$work/verses.txt"
publish_corpus "$work/out" "$here" "$out_dir" "$check" "${SPLIT_FILES[@]}"
