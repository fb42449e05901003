//! 32-bit TCP sequence arithmetic (DOMAIN.md section 2; RFC 9293 section 3.4): the one
//! implementation in the core. Values on the wire are 32-bit; once unwrapped (see the flow
//! stage) they are plain `i64` and compare as integers.

/// 2**32: the sequence space's modulus.
pub const MOD: i64 = 1 << 32;
/// 2**31: half the space, the furthest apart two comparable numbers may be.
pub const HALF: i64 = 1 << 31;

/// `a - b` modulo 2**32 as a signed number in [-2**31, 2**31).
#[inline]
pub fn signed_diff(a: i64, b: i64) -> i64 {
    (a - b + HALF).rem_euclid(MOD) - HALF
}

/// `a + b` as the 32-bit number on the wire (`b` may be negative or a relative offset).
#[inline]
pub fn wire_add(a: i64, b: i64) -> i64 {
    (a + b).rem_euclid(MOD)
}

/// How far `a` lies ahead of `b`: `a - b` modulo 2**32, in [0, 2**32).
#[inline]
pub fn wire_sub(a: i64, b: i64) -> i64 {
    (a - b).rem_euclid(MOD)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps() {
        assert_eq!(signed_diff(5, MOD - 5), 10);
        assert_eq!(signed_diff(MOD - 5, 5), -10);
        assert_eq!(signed_diff(HALF, 0), -HALF);
        assert_eq!(wire_add(MOD - 1, 2), 1);
        assert_eq!(wire_add(0, -1), MOD - 1);
        assert_eq!(wire_sub(1, MOD - 1), 2);
    }
}
