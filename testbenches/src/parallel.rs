//! Independent runs on a few threads: the runner of `size-buffers` and `compare-forwarding`.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `f` of every item, on at most `threads` threads taking the next item as they finish one;
/// the results in the order of `items`.
pub fn map<T: Sync, R: Send>(threads: usize, items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<R>>> = Mutex::new(items.iter().map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..threads.max(1).min(items.len()) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(item) = items.get(i) else { break };
                    let r = f(item);
                    out.lock().expect("no worker panics")[i] = Some(r);
                }
            });
        }
    });
    out.into_inner().expect("no worker panics").into_iter().map(|o| o.expect("every item ran")).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_in_the_order_of_the_items() {
        let items: Vec<u64> = (0..50).collect();
        for threads in [1, 2, 7, 100] {
            assert_eq!(super::map(threads, &items, |x| x * x), items.iter().map(|x| x * x).collect::<Vec<_>>());
        }
        assert!(super::map(4, &[] as &[u64], |x| *x).is_empty());
    }
}
