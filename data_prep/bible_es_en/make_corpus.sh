#!/usr/bin/env bash
# Regenerate the embedded Spanish-English Bible corpus (data_prep/bible_es_en/{train,valid,test}.
# {es,en,doc}) from Debian's SWORD Bible packages: the Reina-Valera 1909 (Spanish) and the World
# English Bible (English), both in the public domain.
#
#   bash data_prep/bible_es_en/make_corpus.sh            # rewrite the corpus files
#   bash data_prep/bible_es_en/make_corpus.sh OUT_DIR    # write them into OUT_DIR instead
#                                                        # (refused if one of them exists there)
#   bash data_prep/bible_es_en/make_corpus.sh --check    # regenerate in a temp dir, compare with
#                                                        # the committed files (exit 1 if they differ)
#
# Needs a Debian-based system with apt lists (run `apt-get update` once) and the `mod2imp`
# exporter of the SWORD library (`apt-get install libsword-utils`). The two text packages are
# fetched with `apt-get download` (not installed), verified against the sha256 recorded below,
# unpacked with `dpkg -x`, exported verse by verse with `mod2imp` (raw OSIS markup) and aligned
# by data_prep/bible_es_en/sword_to_corpus.py: Gospels and Acts, chapters as documents.
set -euo pipefail

SPA_PKG=sword-text-sparv SPA_VERSION=2.60-1 SPA_MODULE=spaRV1909eb
SPA_DEB_SHA256=5c87f9b2bc97457e8a872f5bae7ea7ce59cb3de1dcee73e4d4740451863694cf
ENG_PKG=sword-text-web ENG_VERSION=426.0-1 ENG_MODULE=engWEB2015eb
ENG_DEB_SHA256=930b23670b352f0829a306501de4bebb5e654a2df02cde2cbe86b802177868e1
BOOKS="Matthew,Mark,Luke,John,Acts"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=data_prep/lib/common.sh
. "$here/../lib/common.sh"
CORPUS_FILES=(train.es train.en train.doc valid.es valid.en valid.doc test.es test.en test.doc)

check=0
flags=("--check check=1" "+ words") words=()
parse_flags flags "$@"
[ "${#words[@]}" -le 1 ] || die "expected at most one argument (OUT_DIR), got ${#words[@]}"
out_dir="${words[0]:-}"
[ -z "$out_dir" ] || refuse_existing "$out_dir" "${CORPUS_FILES[@]}"  # fail before downloading

for tool in apt-get dpkg sha256sum python3; do
    command -v "$tool" >/dev/null 2>&1 || die "'$tool' not found; this script needs a Debian-based system"
done
command -v mod2imp >/dev/null 2>&1 || die "'mod2imp' not found; install it with: apt-get install libsword-utils"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT  # our own temporary directory

log "downloading $SPA_PKG=$SPA_VERSION and $ENG_PKG=$ENG_VERSION"
# apt-get download writes into the current directory; as root it warns that the _apt user
# cannot write there, which is harmless.
(cd "$work" && apt-get download "$SPA_PKG=$SPA_VERSION" "$ENG_PKG=$ENG_VERSION") \
    || die "apt-get download failed; run 'apt-get update' first (the versions must be in the apt lists)"
for spec in "$SPA_PKG $SPA_VERSION $SPA_DEB_SHA256" "$ENG_PKG $ENG_VERSION $ENG_DEB_SHA256"; do
    read -r pkg version expected <<<"$spec"
    deb="$work/${pkg}_${version}_all.deb"
    [ -f "$deb" ] || die "apt-get did not produce $(basename "$deb")"
    got="$(sha256sum "$deb" | cut -d' ' -f1)"
    [ "$got" = "$expected" ] || die "sha256 of $(basename "$deb") is $got, expected $expected"
    log "sha256 ok: $(basename "$deb")"
    dpkg -x "$deb" "$work/root"
done

# mod2imp finds modules through SWORD_PATH (a directory holding mods.d/ and modules/).
export SWORD_PATH="$work/root/usr/share/sword"
mod2imp "$SPA_MODULE" >"$work/es.imp" 2>"$work/mod2imp.log" || die "mod2imp $SPA_MODULE failed: $(cat "$work/mod2imp.log")"
mod2imp "$ENG_MODULE" >"$work/en.imp" 2>"$work/mod2imp.log" || die "mod2imp $ENG_MODULE failed: $(cat "$work/mod2imp.log")"

python3 "$here/sword_to_corpus.py" --src-imp "$work/es.imp" --tgt-imp "$work/en.imp" \
    --src-lang es --tgt-lang en --books "$BOOKS" --fix-src-drop-caps "$work/out"

publish_corpus "$work/out" "$here" "$out_dir" "$check" "${CORPUS_FILES[@]}"
