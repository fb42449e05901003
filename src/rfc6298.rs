//! The smoothed RTT / RTT variance estimator of RFC 6298 section 2, once in the core (floats,
//! in the unit of the samples; it never reads a clock). `tcpsack_analyze.rtt.Rfc6298` is this
//! type, for the Python stages that still step it (the sender models).

pub const ALPHA: f64 = 0.125; // RFC 6298 section 2.3
pub const BETA: f64 = 0.25;
pub const K: f64 = 4.0;

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Rfc6298 {
    pub srtt: Option<f64>,
    pub rttvar: Option<f64>,
}

impl Rfc6298 {
    /// Fold one measurement in: 2.2 for the first, 2.3 for the others (RTTVAR first).
    #[inline]
    pub fn update(&mut self, r: f64) {
        match (self.srtt, self.rttvar) {
            (Some(srtt), Some(var)) => {
                self.rttvar = Some((1.0 - BETA) * var + BETA * (srtt - r).abs());
                self.srtt = Some((1.0 - ALPHA) * srtt + ALPHA * r);
            }
            _ => {
                self.srtt = Some(r);
                self.rttvar = Some(r / 2.0);
            }
        }
    }

    /// Fold measurements in, in order; returns the largest SRTT reached on the way (-1 when
    /// `samples` is empty).
    pub fn update_all<I: IntoIterator<Item = f64>>(&mut self, samples: I) -> f64 {
        let mut top = -1.0f64;
        for r in samples {
            self.update(r);
            let s = self.srtt.unwrap_or(-1.0);
            if s > top {
                top = s;
            }
        }
        top
    }

    /// RTO = SRTT + max(G, K * RTTVAR), kept within [minimum, maximum] (sections 2.2-2.5);
    /// None before the first measurement (the caller's initial RTO applies, section 2.1).
    pub fn rto(&self, granularity: f64, minimum: f64, maximum: f64) -> Option<f64> {
        let (srtt, var) = (self.srtt?, self.rttvar?);
        Some((srtt + granularity.max(K * var)).max(minimum).min(maximum))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_and_next() {
        let mut e = Rfc6298::default();
        assert_eq!(e.rto(1.0, 0.0, f64::INFINITY), None);
        e.update(100.0);
        assert_eq!((e.srtt, e.rttvar), (Some(100.0), Some(50.0)));
        e.update(200.0);
        assert_eq!(e.rttvar, Some(0.75 * 50.0 + 0.25 * 100.0));
        assert_eq!(e.srtt, Some(0.875 * 100.0 + 0.125 * 200.0));
        let mut f = Rfc6298::default();
        assert_eq!(f.update_all([100.0, 200.0, 50.0]), 112.5);
        assert_eq!(e.rto(1.0, 0.0, f64::INFINITY), Some(112.5 + 4.0 * 62.5));
    }
}
