"""Switches for the audit, mainly for ablations."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class AuditConfig:
    symmetric_distance: bool = False  # ablation: deterioration and recovery cost the same
    momentum: bool = True  # reward sustained improvement (and charge sustained decline)
    penalty_wall: bool = True  # smooth penalty near the risk threshold
    use_labels: bool = True  # curated client_states / techniques
    use_text: bool = True  # lexicon rules on the utterance text
    counselor_terms: bool = True  # stealth-sycophancy / collusion / overt-harm terms
    learned_layer: bool = True  # the verdict layer (data/layer.json) decides; False: the engine's thresholds
    data_dir: str | None = None  # alternative data folder (tests); None = packaged data


DEFAULT_CONFIG = AuditConfig()
