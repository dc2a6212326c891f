"""Long audio through `punctum transcribe`: peak memory and speed against the file's length.

    python benchmarks/bench_long_audio.py --model runs/e2e-synth-adapt/artifact \\
        --manifest corpora/speech-synth/test/manifest.jsonl --hours 0.25 2 --threads 2

For each length, a FLAC file of that many hours is written (block by block, never held in
memory) by cycling through the manifest's utterances with 0.3 s of silence between them;
then `punctum transcribe` runs on it in a child process. Reported: the child's peak resident
memory (ru_maxrss), wall time, real-time factor, and the words written against the words
spoken. Bounded memory means the peak stays flat as the file grows.
"""

from __future__ import annotations

import argparse
import datetime
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import soundfile
from common import hardware

from punctum.audio.io import SAMPLE_RATE, load_audio
from punctum.audio.manifest import read_records

GAP_SECONDS = 0.3


def write_long_file(path: Path, manifest: Path, hours: float, pool: int = 50) -> int:
    """A FLAC of `hours` hours cycling through the first `pool` utterances; words spoken."""
    records = read_records(manifest)[:pool]
    clips = [load_audio(r.audio_path) for r in records]
    words = [len(r.text.split()) for r in records]
    gap = np.zeros(int(GAP_SECONDS * SAMPLE_RATE), np.float32)
    target, written, spoken, index = int(hours * 3600 * SAMPLE_RATE), 0, 0, 0
    with soundfile.SoundFile(str(path), "w", SAMPLE_RATE, 1, format="FLAC") as out:
        while written < target:
            clip = clips[index % len(clips)]
            out.write(np.concatenate([clip, gap]))
            written += len(clip) + len(gap)
            spoken += words[index % len(clips)]
            index += 1
    return spoken


def transcribe_in_child(model: str, audio: Path, threads: int) -> tuple[str, float, float]:
    """(text, wall seconds, child peak RSS in MB) of `punctum transcribe`."""
    command = [sys.executable, "-m", "punctum", "transcribe", "-m", model,
               "--threads", str(threads), str(audio)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if result.returncode != 0:
        raise SystemExit(f"punctum transcribe failed: {result.stderr.strip()}")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if peak <= before:  # ru_maxrss is the largest child so far: a smaller one hides
        print("note: peak RSS not above an earlier child's; run lengths in rising order",
              file=sys.stderr)
    return result.stdout, seconds, peak / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="acoustic model folder or name")
    parser.add_argument("--manifest", type=Path, required=True,
                        help="a `punctum synth` manifest whose utterances fill the file")
    parser.add_argument("--hours", type=float, nargs="+", default=[0.25, 2.0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for hours in sorted(args.hours):
            audio = Path(tmp) / f"long-{hours}h.flac"
            spoken = write_long_file(audio, args.manifest, hours)
            text, seconds, peak_mb = transcribe_in_child(args.model, audio, args.threads)
            rows.append({"hours": hours, "words_spoken": spoken,
                         "words_written": len(text.split()), "seconds": seconds,
                         "real_time_factor": seconds / (hours * 3600), "peak_rss_mb": peak_mb})
            audio.unlink()
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"<!-- {datetime.date.today()} | {hardware()} | {args.threads} threads -->")
    print("| audio | words spoken | words written | wall time | RTF | peak RSS |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['hours']:g} h | {r['words_spoken']} | {r['words_written']} | "
              f"{r['seconds']:.0f} s | {r['real_time_factor']:.3f} | {r['peak_rss_mb']:.0f} MB |")


if __name__ == "__main__":
    main()
