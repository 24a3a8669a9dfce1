"""Audio features of the sound papers (aurelius): the short-time Fourier transform and its inverse (scipy's
ShortTimeFFT conventions and window, a Hann window; the frames are transformed as one array, because
ShortTimeFFT's own methods loop over frames in Python: 0.04 s a call, 18 of the 20 s of aurelius's plot job in
Griffin-Lim), and log-mel spectrograms with an HTK mel filterbank written out below.

Spec defaults for aurelius: 8 kHz mono, n_fft 256, 32 mel bands; a hop of 800 samples gives 10 frames per second.
"""
from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view


def _stft(n_fft: int, hop: int, sr: float):
    from scipy.signal import ShortTimeFFT
    from scipy.signal.windows import hann

    return ShortTimeFFT(hann(n_fft, sym=False), hop=hop, fs=sr, mfft=n_fft, scale_to="magnitude")


def _first_sample(sft) -> int:
    """The signal index under the first frame's first window sample (<= 0: frames hang over the start)."""
    return sft.p_min * sft.hop - sft.m_num_mid


def stft(x: np.ndarray, n_fft: int = 256, hop: int = 64, sr: float = 8000) -> np.ndarray:
    """Complex spectrogram (n_fft // 2 + 1 frequencies, frames) of a mono signal: ShortTimeFFT.stft's values."""
    sft, x = _stft(n_fft, hop, sr), np.asarray(x, float)
    first, n_frames = _first_sample(sft), sft.p_max(len(x)) - sft.p_min
    padded = np.pad(x, (-first, max(0, first + (n_frames - 1) * hop + n_fft - len(x))))  # zeros beyond the ends
    frames = sliding_window_view(padded, n_fft)[::hop][:n_frames] * sft.win
    # the window's middle sample is time 0 of its frame (ShortTimeFFT's phase convention)
    return np.fft.rfft(np.roll(frames, -sft.m_num_mid, axis=-1), axis=-1).T


def istft(spec: np.ndarray, length: int, n_fft: int = 256, hop: int = 64, sr: float = 8000) -> np.ndarray:
    """The signal of `length` samples whose stft is `spec` (exact when the window overlap allows it: hop <= n_fft/2):
    each frame's inverse FFT times ShortTimeFFT's dual window, overlapped and added."""
    sft = _stft(n_fft, hop, sr)
    frames = np.roll(np.fft.irfft(np.asarray(spec).T, n=n_fft, axis=-1), sft.m_num_mid, axis=-1) * sft.dual_win
    at = _first_sample(sft) + hop * np.arange(len(frames))[:, None] + np.arange(n_fft)  # each value's signal index
    inside = (at >= 0) & (at < length)
    return np.bincount(at[inside], frames[inside], minlength=length)


def hz_to_mel(f):
    return 2595.0 * np.log10(1.0 + np.asarray(f, float) / 700.0)


def mel_to_hz(m):
    return 700.0 * (10.0 ** (np.asarray(m, float) / 2595.0) - 1.0)


def mel_filterbank(n_mels: int, n_fft: int, sr: float) -> np.ndarray:
    """(n_mels, n_fft // 2 + 1) triangular filters, equally spaced on the HTK mel scale from 0 to sr / 2, each
    peaking at 1 on its centre frequency."""
    freqs = np.linspace(0, sr / 2, n_fft // 2 + 1)
    edges = mel_to_hz(np.linspace(0, hz_to_mel(sr / 2), n_mels + 2))
    lo, mid, hi = edges[:-2, None], edges[1:-1, None], edges[2:, None]
    rising, falling = (freqs - lo) / (mid - lo), (hi - freqs) / (hi - mid)
    return np.clip(np.minimum(rising, falling), 0, None)


def log_mel(x: np.ndarray, sr: float = 8000, n_mels: int = 32, n_fft: int = 256, hop: int = 800,
            floor: float = 1e-6) -> np.ndarray:
    """(frames, n_mels) log mel power of a mono signal (frames of the hop, the spec's 10 per second at 8 kHz)."""
    power = np.abs(stft(x, n_fft, hop, sr)) ** 2
    return np.log(mel_filterbank(n_mels, n_fft, sr) @ power + floor).T


def frame_times(length: int, n_fft: int = 256, hop: int = 64, sr: float = 8000) -> np.ndarray:
    """The centre time (s) of each frame `stft` returns for a signal of `length` samples."""
    return _stft(n_fft, hop, sr).t(length)


def griffin_lim(magnitude: np.ndarray, length: int, n_fft: int = 256, hop: int = 64, sr: float = 8000,
                iterations: int = 32, seed: int = 0) -> np.ndarray:
    """A signal of `length` samples whose stft magnitude approximates `magnitude` (frequencies, frames as `stft`
    returns them): Griffin and Lim's alternating projections from a random phase."""
    phase = np.exp(2j * np.pi * np.random.default_rng(seed).random(magnitude.shape))
    for _ in range(iterations):
        x = istft(magnitude * phase, length, n_fft, hop, sr)
        phase = np.exp(1j * np.angle(stft(x, n_fft, hop, sr)))
    return istft(magnitude * phase, length, n_fft, hop, sr)


def write_wav(path, x: np.ndarray, sr: int = 8000) -> None:
    """16-bit PCM mono, clipped to [-1, 1]: what a browser's <audio> element plays."""
    from scipy.io import wavfile

    wavfile.write(path, sr, (np.clip(x, -1, 1) * 32767).astype(np.int16))
