"""Early stopping on a validation score, with the best weights restored, and a model's weights as one hash: one copy
for every paper that trains (or must show that it did not).

    stopper = EarlyStopping(model, patience=8)                  # lower is better (a loss, an MAE)
    for epoch in range(epochs):
        ...train one epoch...
        if stopper.update(epoch, val_loss):
            break
    stopper.restore()                                           # the weights of the best epoch
"""
from __future__ import annotations

import copy
import math


class EarlyStopping:
    """Tracks the best validation score and a copy of the weights at that epoch.

    `update` says stop once `patience` epochs in a row brought no strictly better score. The weights before
    training are the fallback, so `restore` is safe even when no epoch ever improved (e.g. a NaN score).
    """

    def __init__(self, model, patience: int, higher_is_better: bool = False):
        self.model, self.patience = model, patience
        self.sign = -1.0 if higher_is_better else 1.0
        self._best = math.inf  # sign * score: smaller is better internally
        self.best_epoch = None
        self.epochs_without_gain = 0
        self.state = copy.deepcopy(model.state_dict())

    @property
    def best(self) -> float:
        return self.sign * self._best

    def update(self, epoch: int, score: float) -> bool:
        """Record this epoch's validation score; True when training should stop."""
        if self.sign * score < self._best:
            self._best, self.best_epoch, self.epochs_without_gain = self.sign * score, epoch, 0
            self.state = copy.deepcopy(self.model.state_dict())
            return False
        self.epochs_without_gain += 1
        return self.epochs_without_gain >= self.patience

    def restore(self):
        self.model.load_state_dict(self.state)
        return self.model


def state_hash(model) -> str:
    """sha256 of every tensor of the model's state dict, by name: the weights are unchanged iff the hash is (a frozen
    base stays frozen, a training-free method trains nothing)."""
    import hashlib

    h = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        h.update(name.encode())
        h.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()
