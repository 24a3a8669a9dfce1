"""FSD-CAP: fractional subgraph diffusion + class-aware propagation (spec: shared/papers/fsd_cap.md)."""
