"""Cross-paper helpers in workflow/lib/ (each paper's own tests cover how it uses them)."""
import torch

from workflow.lib.training import EarlyStopping


def _model(value: float) -> torch.nn.Linear:
    model = torch.nn.Linear(1, 1, bias=False)
    with torch.no_grad():
        model.weight.fill_(value)
    return model


def _run(scores, patience, higher_is_better=False):
    """Epoch e sets the weight to e, then reports scores[e]; returns the stopper and the epochs run."""
    model = _model(-1.0)
    stopper = EarlyStopping(model, patience, higher_is_better)
    for epoch, score in enumerate(scores):
        with torch.no_grad():
            model.weight.fill_(float(epoch))
        if stopper.update(epoch, score):
            break
    stopper.restore()
    return stopper, epoch + 1, float(model.weight)


def test_stops_after_patience_and_restores_the_best_epoch():
    stopper, ran, weight = _run([5.0, 3.0, 4.0, 2.5, 9.0, 9.0, 1.0], patience=2)
    assert (ran, stopper.best_epoch, stopper.best, weight) == (6, 3, 2.5, 3.0)


def test_a_tie_is_no_gain():
    stopper, ran, _ = _run([5.0, 3.0, 3.0, 3.0, 1.0], patience=2)
    assert (ran, stopper.best_epoch) == (4, 1)


def test_higher_is_better():
    stopper, ran, weight = _run([0.1, 0.5, 0.4, 0.45, 0.9], patience=3, higher_is_better=True)
    assert (ran, stopper.best_epoch, stopper.best, weight) == (5, 4, 0.9, 4.0)


def test_no_improvement_keeps_the_initial_weights():
    stopper, ran, weight = _run([float("nan")] * 3, patience=2)
    assert (ran, stopper.best_epoch, weight) == (2, None, -1.0)
