"""The portal's own evaluation AI (CONTRACT §9): a text model shipped in the repository that suggests each
turn's techniques and client states, kept as the annotation run of its model version."""
