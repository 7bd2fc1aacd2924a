//! `basic_auth_users` and `rate_limit` of the web config: who may ask, and how often.
//! Credentials are bcrypt hashes, checked one at a time and remembered (Prometheus sends the same
//! credentials on every scrape); the rate limit is the toolkit's token bucket.

use std::collections::{BTreeMap, HashSet};
use std::hash::{BuildHasher, RandomState};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const VERIFIED_CACHE_MAX: usize = 64;
const REFUSED_CACHE_MAX: usize = 4096;
/// How long a request waits for its turn at bcrypt before it is refused.
const BCRYPT_WAIT: Duration = Duration::from_secs(2);

/// Basic-auth users and what was already checked.
pub struct BasicAuth {
    /// User name to bcrypt hash.
    pub(super) users: BTreeMap<String, String>,
    /// Hashes of credentials already verified: bcrypt is deliberately slow, and Prometheus
    /// sends the same credentials on every scrape.
    verified: Mutex<HashSet<u64>>,
    /// Hashes of credentials already refused, so a client repeating a wrong password costs no
    /// more bcrypt.
    refused: Mutex<HashSet<u64>>,
    /// One bcrypt at a time: a flood of wrong passwords gets at most one core, never the async
    /// workers that serve scrapes and probes.
    bcrypt: tokio::sync::Semaphore,
    hasher: RandomState,
}

impl BasicAuth {
    /// Users from the file (empty: no auth).
    pub fn new(users: BTreeMap<String, String>) -> BasicAuth {
        BasicAuth {
            users,
            verified: Mutex::new(HashSet::new()),
            refused: Mutex::new(HashSet::new()),
            bcrypt: tokio::sync::Semaphore::new(1),
            hasher: RandomState::new(),
        }
    }

    /// Check an `Authorization` header against the bcrypt hashes. Credentials seen before are
    /// answered from memory; new ones wait (at most 2 s, else refused) for the one bcrypt slot,
    /// and are checked on the blocking pool.
    pub async fn authorized(&self, header: Option<&str>) -> bool {
        if self.users.is_empty() {
            return true;
        }
        let Some((user, pass)) = header.and_then(parse_basic) else {
            return false;
        };
        let Some(hash) = self.users.get(&user) else {
            return false;
        };
        let key = self.hasher.hash_one((&user, &pass, hash));
        let seen =
            |set: &Mutex<HashSet<u64>>| set.lock().map(|v| v.contains(&key)).unwrap_or(false);
        if seen(&self.verified) {
            return true;
        }
        if seen(&self.refused) {
            return false;
        }
        let Ok(Ok(_turn)) = tokio::time::timeout(BCRYPT_WAIT, self.bcrypt.acquire()).await else {
            return false;
        };
        let hash = hash.clone();
        let ok = tokio::task::spawn_blocking(move || bcrypt::verify(&pass, &hash).unwrap_or(false))
            .await
            .unwrap_or(false);
        let (set, max) = if ok {
            (&self.verified, VERIFIED_CACHE_MAX)
        } else {
            (&self.refused, REFUSED_CACHE_MAX)
        };
        if let Ok(mut v) = set.lock() {
            if v.len() >= max {
                v.clear();
            }
            v.insert(key);
        }
        ok
    }
}

/// `rate_limit`: a token bucket of `burst` tokens, one added every `interval` (as Go's
/// `rate.NewLimiter(rate.Every(interval), burst)`, which exporter-toolkit uses).
#[derive(Debug)]
pub struct RateLimit {
    interval: Duration,
    burst: f64,
    /// Tokens left and when they were counted.
    state: Mutex<(f64, Instant)>,
}

impl RateLimit {
    /// A full bucket.
    pub fn new(interval: Duration, burst: u32) -> RateLimit {
        RateLimit {
            interval,
            burst: f64::from(burst),
            state: Mutex::new((f64::from(burst), Instant::now())),
        }
    }

    /// Take a token if there is one.
    pub fn allow(&self) -> bool {
        let Ok(mut s) = self.state.lock() else {
            return true;
        };
        let now = Instant::now();
        let refill = now.duration_since(s.1).as_secs_f64() / self.interval.as_secs_f64();
        s.0 = (s.0 + refill).min(self.burst);
        s.1 = now;
        if s.0 >= 1.0 {
            s.0 -= 1.0;
            true
        } else {
            false
        }
    }
}

fn parse_basic(h: &str) -> Option<(String, String)> {
    let b64 = h
        .strip_prefix("Basic ")
        .or_else(|| h.strip_prefix("basic "))?;
    let raw = base64_decode(b64.trim())?;
    let s = String::from_utf8(raw).ok()?;
    let (u, p) = s.split_once(':')?;
    Some((u.to_string(), p.to_string()))
}

/// Standard base64; `None` on any invalid character or length. Padding is optional, and non-zero
/// trailing bits are accepted as Go's `base64.StdEncoding` (exporter-toolkit's) accepts them.
fn base64_decode(s: &str) -> Option<Vec<u8>> {
    use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
    use base64::Engine as _;
    const LENIENT: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new()
            .with_decode_padding_mode(DecodePaddingMode::Indifferent)
            .with_decode_allow_trailing_bits(true),
    );
    LENIENT.decode(s).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn basic_header_decodes() {
        // "prometheus:secret"
        assert_eq!(
            parse_basic("Basic cHJvbWV0aGV1czpzZWNyZXQ="),
            Some(("prometheus".into(), "secret".into()))
        );
        assert_eq!(parse_basic("Bearer x"), None);
        assert_eq!(parse_basic("Basic !!!"), None);
    }

    #[test]
    fn base64_padding_optional_trailing_bits_accepted() {
        assert_eq!(base64_decode("YTpi").as_deref(), Some(&b"a:b"[..]));
        assert_eq!(base64_decode("YTo=").as_deref(), Some(&b"a:"[..]));
        assert_eq!(base64_decode("YTo").as_deref(), Some(&b"a:"[..]));
        // "YTp" has non-zero bits past the last byte; Go's StdEncoding accepts it too.
        assert_eq!(base64_decode("YTp=").as_deref(), Some(&b"a:"[..]));
        assert_eq!(base64_decode("YTpi-_"), None);
        assert_eq!(base64_decode("Y"), None);
    }

    #[tokio::test]
    async fn bcrypt_users_are_checked_and_cached() {
        let mut users = BTreeMap::new();
        users.insert("u".into(), bcrypt::hash("pw", 4).expect("hash"));
        let s = BasicAuth::new(users);
        let good = "Basic dTpwdw=="; // u:pw
        let bad = "Basic dTpweA=="; // u:px
        assert!(s.authorized(Some(good)).await);
        assert!(s.authorized(Some(good)).await);
        assert!(!s.authorized(Some(bad)).await);
        assert!(!s.authorized(Some(bad)).await);
        assert!(!s.authorized(None).await);
        assert_eq!(s.verified.lock().map(|v| v.len()).unwrap_or(0), 1);
        assert_eq!(s.refused.lock().map(|v| v.len()).unwrap_or(0), 1);
    }

    #[test]
    fn rate_limit_allows_a_burst_then_refuses() {
        let r = RateLimit::new(Duration::from_secs(3600), 2);
        assert!(r.allow());
        assert!(r.allow());
        assert!(!r.allow());
    }
}
