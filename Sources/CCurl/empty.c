// Intentionally empty: the shims are static inline functions in include/CCurl.h.
