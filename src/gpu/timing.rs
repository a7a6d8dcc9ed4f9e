//! GPU timestamps: 64-bit query results, masked to the queue's valid bits and scaled
//! by `timestampPeriod`.

use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use ash::vk;

use super::context::Context;
use super::error::{GpuError, GpuResult, VkResultExt};

/// Not `Sync`: two threads' submissions must not reset and write one pool at once.
pub struct TimestampQueries {
    ctx: Arc<Context>,
    pool: vk::QueryPool,
    count: u32,
    _not_sync: PhantomData<Cell<()>>,
}

impl TimestampQueries {
    /// `None` when the device's compute queue has no timestamps; callers fall back to
    /// wall-clock time.
    pub fn new(ctx: &Arc<Context>, count: u32) -> GpuResult<Option<Self>> {
        if !ctx.info().has_timestamps() {
            return Ok(None);
        }
        let info = vk::QueryPoolCreateInfo::default()
            .query_type(vk::QueryType::TIMESTAMP)
            .query_count(count);
        // SAFETY: valid create info on a live device.
        let pool = unsafe { ctx.create_query_pool(&info, None) }.during("vkCreateQueryPool")?;
        Ok(Some(Self {
            ctx: Arc::clone(ctx),
            pool,
            count,
            _not_sync: PhantomData,
        }))
    }

    pub(crate) fn raw(&self) -> vk::QueryPool {
        self.pool
    }

    pub fn count(&self) -> u32 {
        self.count
    }

    /// Time between timestamps `start` and `end` of the last finished submission.
    pub fn elapsed(&self, start: u32, end: u32) -> GpuResult<Duration> {
        if start.max(end) >= self.count {
            return Err(GpuError::Recording {
                command: "a timestamp read",
                reason: format!(
                    "indices {start} and {end} are not both below the pool's {} timestamps",
                    self.count
                ),
            });
        }
        let mut ticks = vec![0u64; self.count as usize];
        // SAFETY: the submission that wrote the queries has been waited on.
        unsafe {
            self.ctx.get_query_pool_results(
                self.pool,
                0,
                &mut ticks,
                vk::QueryResultFlags::TYPE_64 | vk::QueryResultFlags::WAIT,
            )
        }
        .during("vkGetQueryPoolResults")?;
        let info = self.ctx.info();
        let mask = match info.timestamp_valid_bits {
            64.. => u64::MAX,
            bits => (1u64 << bits) - 1,
        };
        let delta = ticks[end as usize].wrapping_sub(ticks[start as usize]) & mask;
        let nanos = delta as f64 * f64::from(info.timestamp_period_ns);
        Ok(Duration::from_nanos(nanos.round() as u64))
    }
}

impl Drop for TimestampQueries {
    fn drop(&mut self) {
        // SAFETY: no pending submission uses the pool.
        unsafe { self.ctx.destroy_query_pool(self.pool, None) };
    }
}
