"""The report page as a reader sees it: opened in a real headless browser (Debian's Chromium), every image decodes
and every paper's figures are on the page, the examples a person judges by eye included (semhitok's reconstructions
beside the originals, internspatial's QA cards, aurelius's spectrograms), and every sound plays (aurelius's examples
as audio players). `make test` installs Chromium when it runs as root (CI); elsewhere the test
is skipped with the command that installs it."""
import base64
import json
import re
import shutil
import subprocess

import numpy as np
import pytest

from workflow.papers import PAPERS

BROWSER = shutil.which("chromium")
# Appended to a copy of the page: once everything has loaded (the audio players' metadata too), the page writes what
# the browser made of its images and sounds.
PROBE = """<script>
window.addEventListener("load", async () => {
  const images = [...document.images].map(i => ({alt: i.alt, ok: i.complete && i.naturalWidth > 0,
                                                  width: i.naturalWidth, height: i.naturalHeight}));
  const sounds = await Promise.all([...document.querySelectorAll("audio")].map(a => new Promise(done => {
    const report = () => done({title: a.title, ok: !a.error && a.duration > 0, seconds: a.duration});
    if (a.readyState >= 1 || a.error) report();
    else { a.addEventListener("loadedmetadata", report); a.addEventListener("error", report); }
  })));
  const pre = document.createElement("pre");
  pre.id = "probe";
  pre.textContent = JSON.stringify({images, sounds});
  document.body.appendChild(pre);
});
</script>"""


def seen_by_browser(page, tmp_path) -> dict[str, list[dict]]:
    probe = tmp_path / "probe.html"
    probe.write_text(page.read_text() + PROBE)
    done = subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=10000",
                           "--dump-dom", probe.as_uri()], capture_output=True, text=True, timeout=120)
    found = re.search(r'<pre id="probe">(.*?)</pre>', done.stdout, re.S)
    assert found, f"the browser did not run the page's probe:\n{done.stderr[-2000:]}"
    return json.loads(found.group(1).replace("&quot;", '"').replace("&amp;", "&"))


@pytest.mark.skipif(BROWSER is None, reason="needs Debian's Chromium: `apt-get install chromium` (root), as `make test` "
                                            "does when it runs as root")
def test_every_figure_of_every_paper_decodes_in_a_browser(smoke_repo, tmp_path):
    seen = seen_by_browser(smoke_repo / "results/report/index.html", tmp_path)
    images = seen["images"]
    broken = [i["alt"] for i in images if not i["ok"]]
    assert images and not broken, f"images the browser could not decode: {broken}"
    expected = {p.stem for paper in PAPERS for p in (smoke_repo / "results" / paper / "figures").glob("*.png")}
    assert expected <= {i["alt"] for i in images}, sorted(expected - {i["alt"] for i in images})
    # the examples a person judges by eye: semhitok's originals beside every tokenizer's output, internspatial's QA
    # cards (the scene as the model saw it, the question, every model's answer), aurelius's spectrograms
    for example in ("fig_b_reconstructions", "fig_qa_cards", "fig_spectrograms"):
        shown = [i for i in images if i["alt"] == example]
        assert shown and shown[0]["width"] > 300, example
    # and the examples a person judges by ear (aurelius): a player for every sound file, each one playable
    files = {p.stem for paper in PAPERS for p in (smoke_repo / "results" / paper / "figures").glob("*.wav")}
    players = {a["title"]: a for a in seen["sounds"]}
    assert files and files <= set(players), sorted(files - set(players))
    assert all(players[f]["ok"] and players[f]["seconds"] > 5 for f in files), [players[f] for f in files]


@pytest.mark.skipif(BROWSER is None, reason="needs Debian's Chromium")
def test_the_probe_catches_a_broken_image(tmp_path):
    page = tmp_path / "page.html"
    page.write_text('<html><body><img alt="good" src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAA'
                    'fFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="><img alt="bad" '
                    'src="data:image/png;base64,bm90IGEgcG5n"><audio title="silence" src="data:audio/wav;base64,'
                    + base64.b64encode(wav_of(np.zeros(800))).decode() + '"></audio><audio title="noise" '
                    'src="data:audio/wav;base64,bm90IGEgd2F2"></audio></body></html>')
    seen = seen_by_browser(page, tmp_path)
    assert {i["alt"]: i["ok"] for i in seen["images"]} == {"good": True, "bad": False}
    assert {a["title"]: a["ok"] for a in seen["sounds"]} == {"silence": True, "noise": False}


def wav_of(x) -> bytes:
    import io

    from scipy.io import wavfile

    out = io.BytesIO()
    wavfile.write(out, 8000, np.asarray(x, np.int16))
    return out.getvalue()


def page_text(url, tmp_path) -> str:
    """What a person reads on a page of a JavaScript app (its DOM once the scripts ran), tags and styles left out."""
    import html as html_mod

    done = subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                           "--disable-background-networking", "--disable-component-update", "--disable-sync",
                           f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=30000", "--dump-dom", url],
                          capture_output=True, text=True, timeout=180)
    text = re.sub(r"<(style|script)\b.*?</\1>", " ", done.stdout, flags=re.S)
    return html_mod.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", text)))


@pytest.mark.skipif(BROWSER is None, reason="needs Debian's Chromium: `apt-get install chromium` (root), as `make test` "
                                            "does when it runs as root")
def test_the_dashboard_opens_on_the_papers_runs_not_the_genai_overview(smoke_repo, dashboard, tmp_path):
    from conftest import run

    links = run(["python", "-m", "workflow.tools.track", "links", "--port", str(dashboard)], smoke_repo).stdout
    first, *papers = links.splitlines()  # what `make mlflow-ui` prints: the experiments, then each paper's runs
    listing = page_text(first.split(": ", 1)[1], tmp_path)
    assert "Model training" in listing and all(p in listing for p in ("adam_implicit_bias", "cosa", "semhitok"))
    assert "Traces 0" not in listing and "Detect Issues" not in listing
    cosa = next(line.split()[-1] for line in papers if line.split()[0] == "cosa")
    runs = page_text(cosa, tmp_path)
    assert "tta dlinear co2 H13 s0" in runs and "evaluate" in runs  # short names a person tells apart
    assert "Traces 0" not in runs and "Detect Issues" not in runs
