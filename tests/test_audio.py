"""workflow/lib/audio.py with known answers: the STFT round trip, a pure tone's peak bin, the mel scale and its
filterbank, and a tone's log-mel energy in the band that holds its frequency."""
import numpy as np
import pytest

from workflow.lib import audio


def test_the_stft_round_trip_restores_the_signal():
    x = np.random.default_rng(0).normal(size=4000)
    spec = audio.stft(x, n_fft=256, hop=64)
    np.testing.assert_allclose(audio.istft(spec, len(x), n_fft=256, hop=64), x, atol=1e-10)


def test_a_pure_tone_peaks_in_its_frequency_bin():
    sr, f = 8000, 1000.0  # bin width 8000 / 256 = 31.25 Hz: 1000 Hz is bin 32
    t = np.arange(sr) / sr
    spec = np.abs(audio.stft(np.sin(2 * np.pi * f * t), n_fft=256, hop=64, sr=sr))
    assert int(np.argmax(spec[:, spec.shape[1] // 2])) == 32


def test_the_mel_scale_and_its_filterbank():
    assert audio.hz_to_mel(700.0) == pytest.approx(2595 * np.log10(2))
    np.testing.assert_allclose(audio.mel_to_hz(audio.hz_to_mel([0.0, 440.0, 4000.0])), [0, 440, 4000])
    fb = audio.mel_filterbank(32, 256, 8000)
    assert fb.shape == (32, 129) and fb.max() <= 1.0 and (fb >= 0).all()
    assert (fb.sum(0)[1:-1] > 0).all()  # every inner frequency bin lies under some filter
    centres = fb.argmax(1)
    assert (np.diff(centres) >= 0).all()  # filters in order of frequency


def test_a_tones_log_mel_energy_sits_in_its_band():
    sr = 8000
    t = np.arange(10 * sr) / sr
    lm = audio.log_mel(np.sin(2 * np.pi * 1000.0 * t), sr=sr)
    assert lm.shape[1] == 32 and abs(lm.shape[0] - 100) <= 2  # 10 frames per second
    band = int(np.argmax(audio.mel_filterbank(32, 256, sr)[:, 32]))  # the filter that holds 1000 Hz
    assert int(np.argmax(lm[50])) == band


def test_griffin_lim_finds_a_signal_with_the_asked_magnitude():
    sr = 8000
    t = np.arange(sr) / sr
    x = np.sin(2 * np.pi * 440.0 * t) + 0.5 * np.sin(2 * np.pi * 1500.0 * t)
    magnitude = np.abs(audio.stft(x))
    def inconsistency(iterations):  # spectral convergence: how far the result's magnitude is from the asked one
        y = audio.griffin_lim(magnitude, len(x), iterations=iterations)
        return np.linalg.norm(np.abs(audio.stft(y)) - magnitude) / np.linalg.norm(magnitude), y

    random_phase, _ = inconsistency(0)
    found, y = inconsistency(32)
    assert len(y) == len(x) and audio.frame_times(len(x)).shape == (magnitude.shape[1],)
    assert found < 0.2 < 0.5 < random_phase  # the projections converge (measured: 0.64 -> 0.14)
    assert np.abs(y - x).max() > 0.1  # its own phases: the magnitude, not the waveform, is what it matches


@pytest.mark.parametrize("n, n_fft, hop", [(4000, 256, 64), (8000, 256, 800), (1001, 64, 16), (300, 256, 64)])
def test_the_stft_and_its_inverse_equal_scipys_frame_by_frame_shorttimefft(n, n_fft, hop):
    """The vectorised transforms give ShortTimeFFT's own values (its methods, looping over frames, are the reference)."""
    from scipy.signal import ShortTimeFFT
    from scipy.signal.windows import hann

    sft = ShortTimeFFT(hann(n_fft, sym=False), hop=hop, fs=8000, mfft=n_fft, scale_to="magnitude")
    x = np.random.default_rng(n).normal(size=n)
    spec = audio.stft(x, n_fft, hop)
    np.testing.assert_allclose(spec, sft.stft(x), atol=1e-12)
    if hop <= n_fft // 2:  # invertible (log_mel's hop of 800 only analyses)
        noisy = spec * np.exp(1j * np.random.default_rng(1).random(spec.shape))  # no signal's STFT: overlap-add shows
        np.testing.assert_allclose(audio.istft(noisy, n, n_fft, hop), sft.istft(noisy, k1=n), atol=1e-12)
