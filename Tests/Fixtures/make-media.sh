#!/usr/bin/env bash
# Makes the real-media corpus in Tests/Fixtures/media with real encoders (Debian's ffmpeg, ImageMagick,
# sox, lame, cwebp, heif-enc, gzip, exiftool), small enough to commit: a few KB a file, trimmed in duration and
# size. The files are committed; this script documents how each was made and rewrites VERSIONS.txt.
#   apt-get install ffmpeg imagemagick sox lame webp libheif-examples libimage-exiftool-perl
#   (ffmpeg brings libx265 and libvpx)
set -euo pipefail
cd "$(dirname "$0")/media"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
ff=(ffmpeg -hide_banner -loglevel error -y)
convert=/usr/bin/convert   # ImageMagick's, not a stand-in earlier on PATH

# Images: a 64x48 test pattern.
"${ff[@]}" -f lavfi -i testsrc=size=64x48:rate=1 -frames:v 1 "$work/pattern.png"
"$convert" "$work/pattern.png" -quality 80 photo.jpg
# Progressive: several scans, tables between them.
"$convert" "$work/pattern.png" -quality 80 -interlace JPEG photo-progressive.jpg
# EXIF orientation tags, as cameras write them (exiftool adds an APP1 Exif segment after the JFIF one):
# 6 (rotate 90° clockwise) big-endian, exiftool's default, and 8 (rotate 270° clockwise) little-endian.
# iOS turns the picture; Android's BitmapFactory draws it as stored.
rm -f photo-exif-6.jpg photo-exif-8.jpg photo-exif-first.jpg
exiftool -q -Orientation#=6 -o photo-exif-6.jpg photo.jpg
exiftool -q -ExifByteOrder#=II -Orientation#=8 -o photo-exif-8.jpg photo.jpg
# As a phone's camera writes it: the Exif segment first (FF D8 FF E1), no JFIF one; orientation 1.
exiftool -q -JFIF:all= -Orientation#=1 -o photo-exif-first.jpg photo.jpg
"$convert" "$work/pattern.png" logo.png
"$convert" -delay 20 "$work/pattern.png" \( "$work/pattern.png" -negate \) -loop 0 animated.gif
"$convert" "$work/pattern.png" still.gif
"$convert" "$work/pattern.png" photo.bmp
"$convert" "$work/pattern.png" photo.tiff
# ICO: Android's decoders read it, iOS does not.
"$convert" "$work/pattern.png" -resize 32x32 icon.ico
cwebp -quiet -q 70 "$work/pattern.png" -o photo.webp
heif-enc -q 50 "$work/pattern.png" -o photo.heic >/dev/null
"${ff[@]}" -i "$work/pattern.png" -c:v libaom-av1 -still-picture 1 -cpu-used 8 photo.avif
# Animated images: Android draws their first frame only.
"${ff[@]}" -f lavfi -i testsrc=size=64x48:rate=5 -t 0.4 -c:v libwebp -loop 0 animated.webp
"${ff[@]}" -f lavfi -i testsrc=size=64x48:rate=5 -t 0.4 -plays 0 -f apng animated.png
"${ff[@]}" -f lavfi -i testsrc=size=64x48:rate=5 -t 0.4 -c:v libaom-av1 -cpu-used 8 animated.avif
# An AVIF whose major brand is HEIF's `mif1` and lists `avif` as compatible, as earlier encoders wrote
# (libmagic reads the major brand alone and says image/heif): photo.avif with its major brand rewritten.
python3 -c 'import sys; b=bytearray(open("photo.avif","rb").read()); assert b[8:12]==b"avif"; b[8:12]=b"mif1"; sys.stdout.buffer.write(b)' > photo-mif1.avif
gzip -9n -c logo.png > logo.png.gz
python3 -c 'import sys, zlib; sys.stdout.buffer.write(zlib.compress(open("logo.png", "rb").read(), 9))' > logo.png.zz  # deflate
# A PNG followed by 12 MB of zeros, gzipped to a few KB: inflates past any image limit.
{ cat logo.png; head -c 12000000 /dev/zero; } | gzip -9n > inflates-past-limit.png.gz

# Audio: a 0.3 s 440 Hz tone.
sox -n -r 22050 -c 1 "$work/tone.wav" synth 0.3 sine 440
cp "$work/tone.wav" tone.wav
sox "$work/tone.wav" tone.aiff
lame --quiet -b 32 --tt "Tone" --ta "AttachmentFetcher" "$work/tone.wav" tone.mp3
# An ID3v2 tag over 4 KiB before the first frame: embedded cover art, as most music and podcast MP3s have.
"$convert" -seed 7 -size 48x48 plasma:fractal "$work/cover.png"
lame --quiet -b 32 --tt "Tone" --ti "$work/cover.png" "$work/tone.wav" tone-cover-art.mp3
# Tagger padding: the same audio behind a tag padded to 6000 bytes.
lame --quiet -b 32 --tt "Tone" --pad-id3v2-size 6000 "$work/tone.wav" tone-padded-tag.mp3
"${ff[@]}" -i "$work/tone.wav" -c:a aac -b:a 32k -f ipod tone.m4a
# AAC alone in an MPEG-4 file of brand mp42, its moov first: libmagic says video/mp4 from the brand.
"${ff[@]}" -i "$work/tone.wav" -c:a aac -b:a 32k -brand mp42 -movflags +faststart -f mp4 tone-mp42.mp4
"${ff[@]}" -i "$work/tone.wav" -c:a pcm_s16be -f caf tone.caf
"${ff[@]}" -i "$work/tone.wav" -c:a flac tone.flac
"${ff[@]}" -i "$work/tone.wav" -c:a aac -b:a 32k -f adts tone.aac
# ADTS AAC and FLAC behind an ID3v2 tag (over 4 KiB, cut from tone-cover-art.mp3 by its own size
# field): iOS plays neither as MP3, so both stay refused.
tagsize=$(python3 -c 'import sys; b=open("tone-cover-art.mp3","rb").read(10); print(10 + (b[6]<<21 | b[7]<<14 | b[8]<<7 | b[9]))')
head -c "$tagsize" tone-cover-art.mp3 > "$work/tag.id3"
cat "$work/tag.id3" tone.aac > tone-id3.aac
cat "$work/tag.id3" tone.flac > tone-id3.flac
# MPEG audio layer II under an .mp3 name: libmagic says audio/mpeg, iOS plays layer III only.
"${ff[@]}" -i "$work/tone.wav" -c:a mp2 -b:a 64k -f mp2 tone-layer2.mp3
"${ff[@]}" -i "$work/tone.wav" -c:a libopus -b:a 16k tone.ogg 2>/dev/null || "${ff[@]}" -i "$work/tone.wav" -c:a libvorbis tone.ogg

# Video: 0.4 s of a 64x48 pattern at 5 frames per second.
src=(-f lavfi -i testsrc=size=64x48:rate=5 -t 0.4)
"${ff[@]}" "${src[@]}" -c:v libx264 -preset ultrafast -pix_fmt yuv420p -movflags +faststart clip.mp4
"${ff[@]}" "${src[@]}" -c:v libx264 -preset ultrafast -pix_fmt yuv420p -brand "M4V " -f mp4 clip.m4v
# Cameras' own major brands before the standard ones (Sony XAVC S and PSP, Canon): MPEG-4 to an iPhone;
# libmagic says "data" for the first two and audio/mp4 for MSNV.
"${ff[@]}" "${src[@]}" -c:v libx264 -preset ultrafast -pix_fmt yuv420p -brand XAVC -f mp4 clip-xavc.mp4
"${ff[@]}" "${src[@]}" -c:v libx264 -preset ultrafast -pix_fmt yuv420p -brand CAEP -f mp4 clip-caep.mp4
"${ff[@]}" "${src[@]}" -c:v libx264 -preset ultrafast -pix_fmt yuv420p -brand MSNV -f mp4 clip-msnv.mp4
# HEVC as ffmpeg writes it by default (sample entry hev1, which Apple's players do not play) and
# tagged hvc1 (which they do); VP9 in MPEG-4, which iOS does not play.
x265=(-c:v libx265 -x265-params log-level=error -preset ultrafast -pix_fmt yuv420p -movflags +faststart)
"${ff[@]}" "${src[@]}" "${x265[@]}" clip-hev1.mp4
"${ff[@]}" "${src[@]}" "${x265[@]}" -tag:v hvc1 clip-hvc1.mp4
"${ff[@]}" "${src[@]}" -c:v libvpx-vp9 -deadline realtime -movflags +faststart -f mp4 clip-vp9.mp4
# AV1, which only iPhones that decode it in hardware play.
"${ff[@]}" "${src[@]}" -c:v libaom-av1 -cpu-used 8 -movflags +faststart clip-av1.mp4
# AV1 as ffmpeg writes it without +faststart, moov after the media data: 3 s of key frames put it
# past the first 4 KiB, so that the ftyp brands (av01 among them) are all that is in view.
"${ff[@]}" -f lavfi -i testsrc=size=64x48:rate=5 -t 3 -c:v libaom-av1 -cpu-used 8 -g 1 clip-av1-moov-last.mp4
"${ff[@]}" "${src[@]}" -c:v libx264 -preset ultrafast -pix_fmt yuv420p -f mov clip.mov
"${ff[@]}" "${src[@]}" -c:v mpeg4 -f 3gp clip.3gp
"${ff[@]}" "${src[@]}" -c:v mpeg4 -f 3g2 clip.3g2
# ffmpeg writes its SDT packet first; a broadcast segment starts at a PAT, as libmagic expects.
"${ff[@]}" "${src[@]}" -c:v mpeg1video -r 25 -f mpegts "$work/clip.ts"
tail -c +189 "$work/clip.ts" > clip.ts
# And as ffmpeg writes it, which libmagic calls "data": named by its 188-byte packets.
cp "$work/clip.ts" clip-sdt.ts
"${ff[@]}" "${src[@]}" -c:v mpeg1video -r 25 -f mpeg clip.mpg
"${ff[@]}" "${src[@]}" -c:v mpeg4 -f avi clip.avi

{
    echo "# Made by Tests/Fixtures/make-media.sh on $(date -u +%Y-%m-%d) with:"
    ffmpeg -version | head -1
    "$convert" -version | head -1
    echo "sox $(sox --version | sed 's/.*SoX //')"
    lame --version | head -1
    echo "cwebp $(cwebp -version)"
    echo "libheif $(dpkg-query -W -f '${Version}' libheif-examples)"
    echo "gzip $(gzip --version | head -1)"
    echo "exiftool $(exiftool -ver)"
    echo
    echo "# Sizes in bytes"
    for f in $(ls | grep -v VERSIONS.txt | sort); do printf '%s %s\n' "$(stat -c %s "$f")" "$f"; done
} > VERSIONS.txt
