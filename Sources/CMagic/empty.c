// Intentionally empty: CMagic only exposes <magic.h> and a few flag shims.
