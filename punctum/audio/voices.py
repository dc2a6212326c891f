"""The Debian text-to-speech voices `punctum synth` speaks with, and one utterance's synthesis.

    from punctum.audio.voices import find_voice, synthesize
    samples = synthesize(find_voice("espeak-ng:en-us+f3"), "Well, do you see it?", rate=1.1)

Three engines run as subprocesses: espeak-ng (formant synthesis; a base accent plus a voice
variant), flite (CMU diphone and clustergen voices) and festival (diphone and HTS voices;
packages festival, festvox-kallpc16k, festvox-kdlpc16k, festvox-us-slt-hts). A voice id is
``engine:name``. Several voices come from one recorded person (flite kal16 and festival
kal_diphone are both Kevin Lenzo; flite slt and festival's HTS voice are both SLT): the
``family`` names that person (or, for espeak-ng, the accent), so that holding out a family
keeps every related voice out of training.

Speaking rate is a factor (1.2 = 20% faster) that every voice honours. Pitch is a factor
of the voice's mean F0 where the engine takes one (espeak-ng, flite kal16/awb/slt, festival
diphones); flite rms and festival HTS ignore F0 targets, so their pitch stays 1.0. The F0
means and the espeak-ng pitch mapping were measured with librosa.pyin (docs/SPEECH.md).
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from punctum.audio.io import SAMPLE_RATE, read_audio, resample

ENGINES = ("espeak-ng", "flite", "festival")
FESTIVAL_VOICE_DIRS = ("/usr/share/festival/voices", "/usr/lib/festival/voices")
ESPEAK_WORDS_PER_MINUTE = 175  # espeak-ng's default speed
ESPEAK_PITCH_PER_LOG_F0 = 95.0  # -p 20/50/80 measured at 74/97/134 Hz on en-us
TIMEOUT_S = 120


class SynthesisError(OSError):
    """A TTS engine failed or produced no audio (the message carries its stderr)."""


@dataclass(frozen=True)
class Voice:
    """One TTS voice.

    Attributes:
        engine: "espeak-ng", "flite" or "festival".
        name: the engine's voice name (espeak-ng: ``base+variant``).
        family: the person recorded (or the espeak-ng accent) shared by related voices.
        base_f0: the voice's mean F0 in Hz when the engine takes an F0 target; None when
            pitch cannot be set (espeak-ng sets it through -p instead and has None too).
        gender: "F" or "M" (as the engine describes the voice).
    """

    engine: str
    name: str
    family: str
    base_f0: float | None = None
    gender: str = ""

    @property
    def id(self) -> str:
        return f"{self.engine}:{self.name}"

    @property
    def pitch_control(self) -> bool:
        """Whether a pitch factor changes this voice."""
        return self.engine == "espeak-ng" or self.base_f0 is not None

    def matches(self, name: str) -> bool:
        """Whether a user's name selects this voice: its id, name, family or engine."""
        return name in (self.id, self.name, self.family, self.engine)


def _espeak(base: str, variant: str, gender: str) -> Voice:
    return Voice("espeak-ng", f"{base}+{variant}", base, None, gender)


VOICES: tuple[Voice, ...] = (
    *(_espeak("en-us", v, v[0].upper()) for v in ("m1", "m3", "m7", "f1", "f3", "f5")),
    *(_espeak("en", v, v[0].upper()) for v in ("m2", "m4", "f2", "f4")),  # British
    *(_espeak("en-gb-scotland", v, v[0].upper()) for v in ("m5", "f3")),
    *(_espeak("en-gb-x-rp", v, v[0].upper()) for v in ("m6", "f1")),
    *(_espeak("en-029", v, v[0].upper()) for v in ("m2", "f2")),
    _espeak("en-gb-x-gbclan", "m3", "M"),
    _espeak("en-gb-x-gbcwmd", "f4", "F"),
    Voice("flite", "kal16", "kal", 95.0, "M"),
    Voice("flite", "awb", "awb", 129.0, "M"),
    Voice("flite", "rms", "rms", None, "M"),
    Voice("flite", "slt", "slt", 174.0, "F"),
    Voice("festival", "kal_diphone", "kal", 105.0, "M"),
    Voice("festival", "ked_diphone", "ked", 105.0, "M"),
    Voice("festival", "cmu_us_slt_arctic_hts", "slt", None, "F"),
)


def find_voice(voice_id: str) -> Voice:
    """The registered voice with this id (``engine:name``)."""
    for voice in VOICES:
        if voice.id == voice_id:
            return voice
    raise ValueError(f"unknown voice {voice_id!r}; see `punctum synth --list-voices`")


def select_voices(include: tuple[str, ...] = (), exclude: tuple[str, ...] = (),
                  voices: tuple[Voice, ...] = VOICES) -> tuple[Voice, ...]:
    """Voices named in `include` (all when empty) minus those named in `exclude`.

    Names match a voice id, name, family or engine (see `Voice.matches`); a name that
    matches no voice is an error, so a typo cannot silently leak a held-out voice.
    """
    for name in (*include, *exclude):
        if not any(voice.matches(name) for voice in voices):
            raise ValueError(f"no voice, voice name or family matches {name!r}")
    chosen = [v for v in voices if not include or any(v.matches(n) for n in include)]
    chosen = [v for v in chosen if not any(v.matches(n) for n in exclude)]
    if not chosen:
        raise ValueError(f"no voices left after include={list(include)} "
                         f"exclude={list(exclude)}")
    return tuple(chosen)


def _festival_voice_installed(name: str) -> bool:
    return any(path.is_dir() for root in FESTIVAL_VOICE_DIRS
               for path in Path(root).glob(f"*/{name}"))


def voice_available(voice: Voice) -> bool:
    """Whether the engine (and for festival, the voice package) is installed."""
    binary = "text2wave" if voice.engine == "festival" else voice.engine
    if shutil.which(binary) is None:
        return False
    return voice.engine != "festival" or _festival_voice_installed(voice.name)


def missing_voices(voices: tuple[Voice, ...]) -> list[str]:
    """Ids of the voices whose engine or voice package is not installed."""
    return [voice.id for voice in voices if not voice_available(voice)]


def _espeak_command(voice: Voice, rate: float, pitch: float, text_file: str,
                    wav: str) -> list[str]:
    pitch_value = round(50 + ESPEAK_PITCH_PER_LOG_F0 * math.log(pitch))
    return ["espeak-ng", "-v", voice.name, "-s", str(round(ESPEAK_WORDS_PER_MINUTE * rate)),
            "-p", str(min(max(pitch_value, 0), 99)), "-b", "1", "-f", text_file, "-w", wav]


def _flite_command(voice: Voice, rate: float, pitch: float, text_file: str,
                   wav: str) -> list[str]:
    command = ["flite", "-voice", voice.name, "--setf", f"duration_stretch={1.0 / rate:.4f}"]
    if voice.base_f0 is not None:
        command += ["--setf", f"int_f0_target_mean={voice.base_f0 * pitch:.1f}"]
    return command + ["-f", text_file, "-o", wav]


def _festival_command(voice: Voice, rate: float, pitch: float, text_file: str,
                      wav: str) -> list[str]:
    settings = [f"(voice_{voice.name})"]
    if voice.name.endswith("_hts"):  # HTS ignores Duration_Stretch; hts_engine's -r is speed
        settings.append(f'(set! hts_engine_params (append hts_engine_params '
                        f'(list (list "-r" {rate:.4f}))))')
    else:
        settings.append(f"(Parameter.set 'Duration_Stretch {1.0 / rate:.4f})")
    if voice.base_f0 is not None:
        settings.append(f"(set! int_lr_params (list (list 'target_f0_mean "
                        f"{voice.base_f0 * pitch:.1f}) (list 'target_f0_std 14) "
                        f"(list 'model_f0_mean 170) (list 'model_f0_std 34)))")
    command = ["text2wave", "-o", wav]
    for setting in settings:
        command += ["-eval", setting]
    return command + [text_file]


_COMMANDS = {"espeak-ng": _espeak_command, "flite": _flite_command,
             "festival": _festival_command}


def synthesize(voice: Voice, text: str, rate: float = 1.0, pitch: float = 1.0,
               sample_rate: int = SAMPLE_RATE) -> np.ndarray:
    """Speak one utterance.

    Args:
        voice: a registered voice.
        text: the text to speak (one line).
        rate: speaking-rate factor (> 0; 1.0 is the voice's default).
        pitch: F0 factor (> 0); ignored by voices without pitch control.
        sample_rate: output rate in Hz.

    Returns:
        (n,) float32 mono samples at `sample_rate`.

    Raises:
        SynthesisError: the engine is missing, failed, timed out or produced no audio.
    """
    if rate <= 0 or pitch <= 0:
        raise ValueError(f"rate and pitch must be positive, got {rate} and {pitch}")
    with tempfile.TemporaryDirectory(prefix="punctum-tts-") as folder:
        text_file, wav = os.path.join(folder, "text.txt"), os.path.join(folder, "out.wav")
        Path(text_file).write_text(" ".join(text.split()) + "\n", encoding="utf-8")
        command = _COMMANDS[voice.engine](voice, rate, pitch, text_file, wav)
        _run(command, voice)
        try:
            samples, rate_in = read_audio(wav)
        except (FileNotFoundError, ValueError) as error:
            raise SynthesisError(f"{voice.id} produced no audio for {text[:60]!r} "
                                 f"({error})") from None
    return resample(samples, rate_in, sample_rate)


def _run(command: list[str], voice: Voice) -> None:
    try:
        result = subprocess.run(command, capture_output=True, timeout=TIMEOUT_S)
    except FileNotFoundError:
        raise SynthesisError(f"{voice.id}: {command[0]} is not installed (Debian: run "
                             f"scripts/system-deps.sh)") from None
    except subprocess.TimeoutExpired:
        raise SynthesisError(f"{voice.id}: {command[0]} took more than {TIMEOUT_S} s") from None
    if result.returncode != 0:
        stderr = " ".join(result.stderr.decode("utf-8", "replace").split())[-300:]
        raise SynthesisError(f"{voice.id}: {command[0]} exited with {result.returncode}: "
                             f"{stderr}")
