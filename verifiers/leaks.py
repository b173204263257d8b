"""Does the view of a task give its private category away? A bag-of-words probe.

The cheapest cheat reads the task view (id, instruction, public metadata) and guesses what the
task wants: refuse, report it infeasible, apply the faults the id names. If a plain text
classifier, trained on the views of a suite's other tasks, predicts a task's private label
(feasible or not, grant or refuse, fault class) better than always answering the most common
label, the views carry that label and a policy will learn it too. The probe is a Bernoulli
naive Bayes over word and word-pair presence, scored by stratified k-fold cross-validation
(averaged over a few shuffles, so one lucky split decides nothing). It is deliberately simple:
it finds the leaks that matter (a sentence only one category's template has, a word of the id)
and needs nothing beyond numpy.
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

TOKEN = re.compile(r"[a-z]+|[0-9]+")


def view_text(view: Mapping[str, Any]) -> str:
    """What a view says, as one text: the id, the instruction, the step budget and each public
    metadata entry (as ``key value``, so a value is a word of its key's context too)."""
    meta = view.get("metadata") or {}
    parts = [str(view.get("id", "")), str(view.get("instruction", ""))]
    if "max_steps" in view:
        parts.append(f"max_steps {view['max_steps']}")
    parts += [f"{k} {v}" for k, v in sorted(meta.items())]
    return " \n ".join(parts)


def features(text: str) -> set[str]:
    """Words and adjacent word pairs, lower-cased (presence, not counts)."""
    words = TOKEN.findall(text.lower())
    return set(words) | {f"{a}_{b}" for a, b in itertools.pairwise(words)}


@dataclass(frozen=True)
class LeakScore:
    label: str
    tasks: int
    classes: int
    majority: float  # the rate of always answering the most common label
    accuracy: float  # the classifier's cross-validated rate

    @property
    def excess(self) -> float:
        return self.accuracy - self.majority

    def __str__(self) -> str:
        return (
            f"{self.label}: {self.tasks} tasks, {self.classes} classes, majority "
            f"{self.majority:.3f}, classifier {self.accuracy:.3f} ({self.excess:+.3f})"
        )


class NaiveBayes:
    """Bernoulli naive Bayes over feature presence, add-one smoothed: a feature's absence is
    evidence too, which a multinomial model (whose smoothing spreads over the whole vocabulary,
    unique ids included) would drown for a rare class."""

    def fit(self, docs: Sequence[set[str]], labels: Sequence[Hashable]) -> NaiveBayes:
        self.classes = sorted(set(labels), key=repr)
        seen = Counter(w for doc in docs for w in doc)
        vocab = sorted(
            w for w, n in seen.items() if n >= 2
        )  # a word of one task generalizes to none
        self.index = {w: i for i, w in enumerate(vocab)}
        present = np.zeros((len(self.classes), len(vocab)))
        sizes = np.zeros(len(self.classes))
        for doc, label in zip(docs, labels, strict=True):
            c = self.classes.index(label)
            sizes[c] += 1
            present[c, [self.index[w] for w in doc if w in self.index]] += 1
        p = (present + 1) / (sizes[:, None] + 2)
        self.log_prior = np.log(sizes / sizes.sum())
        self.log_odds = np.log(p) - np.log1p(-p)
        self.log_absent = np.log1p(-p).sum(axis=1)
        return self

    def predict(self, doc: set[str]) -> Hashable:
        cols = [self.index[w] for w in doc if w in self.index]
        scores = self.log_prior + self.log_absent + self.log_odds[:, cols].sum(axis=1)
        return self.classes[int(np.argmax(scores))]


def _folds(labels: Sequence[Hashable], k: int, rng: np.random.Generator) -> list[list[int]]:
    """Stratified folds: each label's tasks shuffled and dealt round-robin."""
    folds: list[list[int]] = [[] for _ in range(k)]
    by_label: dict[Hashable, list[int]] = {}
    for i, label in enumerate(labels):
        by_label.setdefault(label, []).append(i)
    turn = 0
    for label in sorted(by_label, key=repr):
        members = list(by_label[label])
        rng.shuffle(members)
        for i in members:
            folds[turn % k].append(i)
            turn += 1
    return [f for f in folds if f]


def leak_score(
    texts: Sequence[str],
    labels: Sequence[Hashable],
    *,
    name: str = "label",
    folds: int = 5,
    repeats: int = 5,
    seed: int = 0,
) -> LeakScore:
    """Cross-validated accuracy of predicting ``labels`` from ``texts`` vs the majority rate.

    The majority rate is that of the whole suite (what a policy that always refuses, or never
    does, would get); each fold's classifier is trained on the other folds only."""
    if len(texts) != len(labels) or not texts:
        raise ValueError("leak_score needs one label per text, and at least one text")
    docs = [features(t) for t in texts]
    majority = Counter(labels).most_common(1)[0][1] / len(labels)
    k = max(2, min(folds, len(texts)))
    rng = np.random.default_rng(seed)
    right = 0
    for _ in range(repeats):
        for test in _folds(labels, k, rng):
            held = set(test)
            train = [i for i in range(len(docs)) if i not in held]
            if not train:
                continue
            model = NaiveBayes().fit([docs[i] for i in train], [labels[i] for i in train])
            right += sum(model.predict(docs[i]) == labels[i] for i in test)
    return LeakScore(
        label=name,
        tasks=len(texts),
        classes=len(set(labels)),
        majority=majority,
        accuracy=right / (repeats * len(texts)),
    )
