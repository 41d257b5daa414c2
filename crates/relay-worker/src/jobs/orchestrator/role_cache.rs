//! Author roles remembered per (tracker, project, username) for a while, so a busy issue does not
//! call the tracker's member API on every event. In process only: a restart or another worker
//! asks again, which is merely one more lookup.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use relay_tracker::AuthorRole;

/// How long a looked-up role is trusted. A promotion or removal takes effect within this time;
/// roles change rarely, lookups happen on every event.
pub const ROLE_CACHE_TTL: Duration = Duration::from_secs(10 * 60);

/// At most this many (tracker, project, username) entries; past it the expired entries go, then
/// the oldest, so memory stays bounded however many authors write.
pub const ROLE_CACHE_MAX_ENTRIES: usize = 4096;

/// Whose role on which project.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RoleKey {
    pub tracker: String,
    pub project: String,
    pub username: String,
}

#[derive(Debug, Clone, Copy)]
struct Cached {
    role: AuthorRole,
    looked_up_at: Instant,
}

/// The in-process role cache (the [`super::Orchestrator`] holds one). Only successful lookups are
/// kept: a failed lookup is asked again next time.
#[derive(Debug, Default)]
pub struct RoleCache {
    entries: Mutex<HashMap<RoleKey, Cached>>,
}

impl RoleCache {
    /// The role remembered for `key`, if looked up less than [`ROLE_CACHE_TTL`] before `now`.
    pub fn get(&self, key: &RoleKey, now: Instant) -> Option<AuthorRole> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries
            .get(key)
            .filter(|c| now.saturating_duration_since(c.looked_up_at) < ROLE_CACHE_TTL)
            .map(|c| c.role)
    }

    /// Remembers `role` for `key` as looked up at `now`.
    pub fn insert(&self, key: RoleKey, role: AuthorRole, now: Instant) {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if entries.len() >= ROLE_CACHE_MAX_ENTRIES && !entries.contains_key(&key) {
            entries.retain(|_, c| now.saturating_duration_since(c.looked_up_at) < ROLE_CACHE_TTL);
            if entries.len() >= ROLE_CACHE_MAX_ENTRIES
                && let Some(oldest) = entries
                    .iter()
                    .min_by_key(|(_, c)| c.looked_up_at)
                    .map(|(k, _)| k.clone())
            {
                entries.remove(&oldest);
            }
        }
        entries.insert(
            key,
            Cached {
                role,
                looked_up_at: now,
            },
        );
    }

    /// How many entries are held (expired ones included until evicted).
    pub fn len(&self) -> usize {
        self.entries.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(username: &str) -> RoleKey {
        RoleKey {
            tracker: "gitlab".into(),
            project: "5".into(),
            username: username.into(),
        }
    }

    #[test]
    fn a_role_is_remembered_until_the_ttl_passes() {
        let cache = RoleCache::default();
        let t0 = Instant::now();
        assert_eq!(cache.get(&key("alice"), t0), None);
        cache.insert(key("alice"), AuthorRole::Member, t0);
        assert_eq!(cache.get(&key("alice"), t0), Some(AuthorRole::Member));
        let almost = t0 + ROLE_CACHE_TTL - Duration::from_secs(1);
        assert_eq!(cache.get(&key("alice"), almost), Some(AuthorRole::Member));
        assert_eq!(cache.get(&key("alice"), t0 + ROLE_CACHE_TTL), None);
        // Another project or tracker is another key.
        let other = RoleKey {
            project: "6".into(),
            ..key("alice")
        };
        assert_eq!(cache.get(&other, t0), None);
    }

    #[test]
    fn the_cache_stays_bounded_and_evicts_the_oldest() {
        let cache = RoleCache::default();
        let t0 = Instant::now();
        for i in 0..ROLE_CACHE_MAX_ENTRIES {
            let at = t0 + Duration::from_millis(u64::try_from(i).unwrap());
            cache.insert(key(&format!("user{i}")), AuthorRole::Contributor, at);
        }
        assert_eq!(cache.len(), ROLE_CACHE_MAX_ENTRIES);
        let later = t0 + Duration::from_secs(5);
        cache.insert(key("newcomer"), AuthorRole::Owner, later);
        assert_eq!(cache.len(), ROLE_CACHE_MAX_ENTRIES);
        assert_eq!(cache.get(&key("user0"), later), None, "the oldest went");
        assert_eq!(
            cache.get(&key("user1"), later),
            Some(AuthorRole::Contributor)
        );
        assert_eq!(cache.get(&key("newcomer"), later), Some(AuthorRole::Owner));
        // Once everything expired, a new entry clears the expired ones.
        let expired = later + ROLE_CACHE_TTL + Duration::from_secs(1);
        cache.insert(key("late"), AuthorRole::Member, expired);
        assert_eq!(cache.len(), 1);
    }
}
