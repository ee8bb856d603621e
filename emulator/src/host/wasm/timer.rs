//! Timers on the JS host's `setTimeout`, as `Send` futures: a [`Sleep`] holds a key and a shared flag, never a JS
//! value (axum needs `Send` handler futures, and a JS value is not `Send`). The JS timer handles live in this
//! thread's table; one callback, made once, receives the key (`setTimeout(callback, ms, key)`) and wakes the sleeper.
//! A dropped `Sleep` clears its JS timer, so nothing is left to keep a runtime's event loop alive after `close()`.

use crate::util::lock;
use std::cell::RefCell;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(catch, js_name = setTimeout)]
    fn set_timeout(handler: &JsValue, ms: f64, key: u32) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch, js_name = clearTimeout)]
    fn clear_timeout(handle: &JsValue) -> Result<(), JsValue>;
}

/// The longest delay `setTimeout` takes (2^31 - 1 ms); longer ones fire at once in every runtime.
const MAX_DELAY_MS: f64 = 2_147_483_647.0;

#[derive(Default)]
struct Fired {
    done: bool,
    waker: Option<Waker>,
}

struct Live {
    handle: JsValue,
    fired: Arc<Mutex<Fired>>,
}

#[derive(Default)]
struct Timers {
    next: u32,
    live: HashMap<u32, Live>,
    callback: Option<Closure<dyn FnMut(u32)>>,
}

thread_local! {
    static TIMERS: RefCell<Timers> = RefCell::new(Timers::default());
}

/// Waits `d` on the host's `setTimeout`.
pub fn sleep(d: Duration) -> Sleep {
    Sleep {
        ms: (d.as_secs_f64() * 1000.0).min(MAX_DELAY_MS),
        key: None,
        fired: Arc::default(),
    }
}

/// The future of [`sleep`].
pub struct Sleep {
    ms: f64,
    key: Option<u32>,
    fired: Arc<Mutex<Fired>>,
}

impl Future for Sleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        {
            let mut f = lock(&self.fired);
            if f.done {
                return Poll::Ready(());
            }
            f.waker = Some(cx.waker().clone());
        }
        if self.key.is_none() {
            match start(self.ms, self.fired.clone()) {
                Some(key) => self.key = Some(key),
                // the host refused the timer: no wait rather than a hang
                None => return Poll::Ready(()),
            }
        }
        Poll::Pending
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            cancel(key);
        }
    }
}

fn start(ms: f64, fired: Arc<Mutex<Fired>>) -> Option<u32> {
    TIMERS.with(|t| {
        let mut t = t.try_borrow_mut().ok()?;
        t.next = t.next.wrapping_add(1);
        let key = t.next;
        let callback = t
            .callback
            .get_or_insert_with(|| Closure::new(on_timer))
            .as_ref()
            .clone();
        let handle = set_timeout(&callback, ms, key).ok()?;
        t.live.insert(key, Live { handle, fired });
        Some(key)
    })
}

fn on_timer(key: u32) {
    let live = TIMERS.with(|t| t.try_borrow_mut().ok()?.live.remove(&key));
    if let Some(live) = live {
        let waker = {
            let mut f = lock(&live.fired);
            f.done = true;
            f.waker.take()
        };
        if let Some(w) = waker {
            w.wake();
        }
    }
}

fn cancel(key: u32) {
    let live = TIMERS.with(|t| t.try_borrow_mut().ok()?.live.remove(&key));
    if let Some(live) = live {
        let _ = clear_timeout(&live.handle);
    }
}
