//! The flow table: which connection, and which direction, each packet belongs to (DOMAIN.md
//! section 1; the core's `flows.py`, whose module doc states the rules in full).
//!
//! A *flow* is an unordered pair of endpoints; a *connection* is a flow plus an epoch. A SYN
//! without ACK whose sequence number differs from the connection's ISN starts a new connection
//! on the same flow when the previous one saw a FIN or RST, was silent for longer than the reuse
//! silence, or never had a SYN answered. **The connection-finished event** ([`FlowTable::expire`]):
//! a connection that has *ended* (a FIN each way; a RST; an attempt answered by nothing) and then
//! stayed silent for its delay (5 s after FINs, 240 s after a RST or for an attempt) leaves the
//! table, to be finished into its frozen result and its state freed; the same rule, applied per
//! packet, makes a later packet of its endpoints start the next epoch. A flow whose connections
//! all finished keeps only its epoch count.

use std::collections::{HashMap, VecDeque};

use super::stage::{Connection, Ended, Unconsumed};
use super::{Batch, Endpoint};
use crate::events::flags::{ACK, FIN, RST, SYN};

/// An unordered endpoint pair: the lower endpoint first.
pub type FlowKey = (Endpoint, Endpoint);

/// A live connection's place in the table (its slot).
pub type Handle = usize;

#[derive(Clone, Copy, Debug, Default)]
struct Flow {
    current: Option<Handle>,
    count: u32,
}

/// The table's delays, in ns of analysis time.
#[derive(Clone, Copy, Debug)]
pub struct Delays {
    pub reuse_silence_ns: i64,
    pub close_ns: i64,
    pub abort_ns: i64,
}

impl Delays {
    /// From seconds, as `flows.FlowTable` takes them (the abort delay is at least the close delay).
    pub fn from_s(reuse_silence_s: f64, close_s: f64, abort_s: f64) -> Delays {
        let close_ns = (close_s * 1e9) as i64;
        Delays { reuse_silence_ns: (reuse_silence_s * 1e9) as i64, close_ns, abort_ns: ((abort_s * 1e9) as i64).max(close_ns) }
    }

    fn of(&self, how: Ended) -> i64 {
        match how {
            Ended::Closed => self.close_ns,
            Ended::Reset | Ended::Attempt => self.abort_ns,
        }
    }
}

struct Slot {
    conn: Box<Connection>, // boxed: moved out whole when it is finished
    key: FlowKey,
    created: u64,
    queued: u64,  // stamp of its live entry in the queue, 0: not in it
    aborted: u64, // stamp of its live entry in the aborted queue, 0: not in it
}

/// Connections by their latest chunk (or, for the aborted queue, by the order they were put
/// there), oldest first; an entry is live while its stamp is the slot's.
type Queue = VecDeque<(Handle, u64)>;

pub struct FlowTable {
    delays: Delays,
    flows: HashMap<FlowKey, Flow>,  // flows with a live connection
    retired: HashMap<FlowKey, u32>, // epoch counts of flows with none
    slots: Vec<Option<Slot>>,
    free: Vec<Handle>,
    queue: Queue,
    aborted: Queue,
    stamp: u64,
    created: u64,
    /// connections created since the caller last took them (for numbering)
    pub new: Vec<Handle>,
}

fn flow_key(b: &Batch, row: usize) -> FlowKey {
    let (s, d) = (b.src(row), b.dst(row));
    if s <= d {
        (s, d)
    } else {
        (d, s)
    }
}

impl FlowTable {
    pub fn new(delays: Delays) -> FlowTable {
        FlowTable {
            delays,
            flows: HashMap::new(),
            retired: HashMap::new(),
            slots: Vec::new(),
            free: Vec::new(),
            queue: VecDeque::new(),
            aborted: VecDeque::new(),
            stamp: 0,
            created: 0,
            new: Vec::new(),
        }
    }

    pub fn conn(&self, h: Handle) -> &Connection {
        &self.slots[h].as_ref().expect("a live connection").conn
    }

    pub fn conn_mut(&mut self, h: Handle) -> &mut Connection {
        &mut self.slots[h].as_mut().expect("a live connection").conn
    }

    /// Bytes of the table and its live connections' state.
    pub fn held_bytes(&self) -> usize {
        let conns: usize = self.slots.iter().flatten().map(|s| s.conn.heap_bytes()).sum();
        let key = size_of::<FlowKey>();
        conns
            + size_of::<Option<Slot>>() * self.slots.capacity()
            + (key + size_of::<Flow>() + 1) * self.flows.capacity()
            + (key + 4 + 1) * self.retired.capacity()
            + 16 * (self.queue.capacity() + self.aborted.capacity())
    }

    /// How many connections are live.
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }

    fn next_stamp(&mut self) -> u64 {
        self.stamp += 1;
        self.stamp
    }

    fn new_connection(&mut self, key: FlowKey, b: &Batch, row: usize) -> Handle {
        let flow = self.flows.get_mut(&key).expect("a live flow");
        let epoch = flow.count as i64;
        flow.count += 1;
        let old = flow.current;
        let conn = Connection::new(-1, b, row, epoch);
        self.created += 1;
        let slot = Slot { conn: Box::new(conn), key, created: self.created, queued: 0, aborted: 0 };
        let h = match self.free.pop() {
            Some(h) => {
                self.slots[h] = Some(slot);
                h
            }
            None => {
                self.slots.push(Some(slot));
                self.slots.len() - 1
            }
        };
        if let Some(old) = old {
            // superseded: no packet can reach it any more (expire finishes it)
            if self.slots[old].as_ref().expect("live").queued == 0 {
                let s = self.next_stamp();
                self.slots[old].as_mut().expect("live").queued = s;
                self.queue.push_back((old, s));
            }
        }
        self.flows.get_mut(&key).expect("a live flow").current = Some(h);
        self.new.push(h);
        h
    }

    /// Split `b` into (connection, its rows in capture order), calling `consume` on each part
    /// as soon as it is decided (the epoch rule reads what the connection consumed so far).
    pub fn split(&mut self, b: &Batch, mut consume: impl FnMut(&mut FlowTable, Handle, &[usize])) {
        let mut order: Vec<FlowKey> = Vec::new();
        let mut rows_of: HashMap<FlowKey, Vec<usize>> = HashMap::new();
        for i in 0..b.len() {
            let key = flow_key(b, i);
            rows_of
                .entry(key)
                .or_insert_with(|| {
                    order.push(key);
                    Vec::new()
                })
                .push(i);
        }
        for key in order {
            let rows = rows_of.remove(&key).expect("grouped");
            if !self.flows.contains_key(&key) {
                let count = self.retired.remove(&key).unwrap_or(0);
                self.flows.insert(key, Flow { current: None, count });
            }
            self.epochs(key, b, &rows, &mut consume);
        }
    }

    fn touch(&mut self, h: Handle) {
        let s = self.next_stamp();
        let slot = self.slots[h].as_mut().expect("live");
        slot.queued = s;
        slot.aborted = 0;
        self.queue.push_back((h, s));
    }

    fn epochs(&mut self, key: FlowKey, b: &Batch, rows: &[usize], consume: &mut impl FnMut(&mut FlowTable, Handle, &[usize])) {
        let mut conn = match self.flows[&key].current {
            Some(h) => h,
            None => {
                let h = self.new_connection(key, b, rows[0]);
                self.conn_mut(h).syn_isn = None;
                h
            }
        };
        let ts = |k: usize| b.ts_ns[rows[k]];
        let first_prev = self.conn(conn).last_ts_ns.unwrap_or(ts(0));
        let since = |k: usize| ts(k) - if k == 0 { first_prev } else { ts(k - 1) };
        let syn_only = |k: usize| b.flags[rows[k]] as u16 & (SYN | ACK) == SYN;
        let mut begin = 0;
        let mut emit = |table: &mut FlowTable, h: Handle, part: &[usize]| {
            if !part.is_empty() {
                table.touch(h);
                consume(table, h, part);
            }
        };
        for k in 0..rows.len() {
            let quiet = since(k) > self.delays.close_ns;
            let syn = syn_only(k);
            if !quiet && !syn {
                continue;
            }
            let row = rows[k];
            if quiet {
                // the connection-finished rule, decided per packet so that it does not depend on
                // where chunks end: was the connection over before this packet?
                let c = self.conn(conn);
                let how = if c.packets > 0 || k > begin { c.ended_with(&self.unconsumed(conn, b, &rows[begin..k])) } else { None };
                if let Some(how) = how {
                    if since(k) > self.delays.of(how) {
                        emit(self, conn, &rows[begin..k]);
                        conn = self.new_connection(key, b, row);
                        self.conn_mut(conn).syn_isn = None;
                        begin = k;
                    }
                }
            }
            if !syn {
                continue;
            }
            let seq = b.seq[row];
            let c = self.conn(conn);
            if c.syn_isn.is_none() && k == begin && c.packets == 0 {
                self.conn_mut(conn).syn_isn = Some(seq);
                continue;
            }
            let before = &rows[begin..k];
            let answered = c.answered() || before.iter().any(|&r| b.flags[r] as u16 & (SYN | ACK) == SYN | ACK);
            let ended = c.closed || before.iter().any(|&r| b.flag(r, FIN | RST)) || !answered;
            let last_ts = if k > begin { Some(ts(k - 1)) } else { c.last_ts_ns };
            let silent = last_ts.is_some_and(|t| b.ts_ns[row] - t > self.delays.reuse_silence_ns);
            match c.syn_isn {
                None => self.conn_mut(conn).syn_isn = Some(seq),
                Some(isn) if seq != isn && (ended || silent) => {
                    emit(self, conn, &rows[begin..k]);
                    conn = self.new_connection(key, b, row);
                    self.conn_mut(conn).syn_isn = Some(seq);
                    begin = k;
                }
                _ => {}
            }
        }
        emit(self, conn, &rows[begin..]);
    }

    /// What `rows` of `b` would add to the connection's counts of how it ended.
    fn unconsumed(&self, h: Handle, b: &Batch, rows: &[usize]) -> Unconsumed {
        let c = self.conn(h);
        let mut u = Unconsumed::default();
        for &r in rows {
            let d = c.direction_of(b, r);
            u.rst += b.flag(r, RST) as i64;
            u.fin[d] += b.flag(r, FIN) as i64;
            u.syn[d] += b.flag(r, SYN) as i64;
            u.sent[d] += 1;
        }
        u
    }

    /// Take from the front of `queue` the entries whose connection's last packet came before
    /// `limit_ns` (stale entries are dropped on the way).
    fn pop_silent(slots: &[Option<Slot>], queue: &mut Queue, aborted: bool, limit_ns: i64) -> Vec<Handle> {
        let mut out = Vec::new();
        while let Some(&(h, stamp)) = queue.front() {
            let live = slots[h].as_ref().filter(|s| stamp == if aborted { s.aborted } else { s.queued });
            match live {
                None => {}
                Some(s) if s.conn.last_ts_ns.is_some_and(|t| t >= limit_ns) => return out,
                Some(_) => out.push(h),
            }
            queue.pop_front();
        }
        out
    }

    /// The connection-finished event: the connections that ended and have been silent for their
    /// delay at analysis time `now_ns`, oldest first; they leave the table (taken out of their
    /// slots, their working state with them), with the slot each held.
    pub fn expire(&mut self, now_ns: i64) -> Vec<(Handle, Box<Connection>)> {
        let mut done = Vec::new();
        for h in Self::pop_silent(&self.slots, &mut self.queue, false, now_ns - self.delays.close_ns) {
            let slot = self.slots[h].as_mut().expect("live");
            slot.queued = 0;
            let ended = slot.conn.ended_with(&Unconsumed::default());
            let current = self.flows.get(&slot.key).and_then(|f| f.current) == Some(h);
            if !current || ended == Some(Ended::Closed) {
                done.push((h, self.retire(h)));
            } else if ended.is_some() && slot.aborted == 0 {
                self.stamp += 1;
                slot.aborted = self.stamp;
                self.aborted.push_back((h, self.stamp));
            } // else: silent but not ended: stays live, out of both queues until its next packet
        }
        for h in Self::pop_silent(&self.slots, &mut self.aborted, true, now_ns - self.delays.abort_ns) {
            done.push((h, self.retire(h)));
        }
        done
    }

    /// Every live connection (end of capture), in the order they were created.
    pub fn finish_all(&mut self) -> Vec<(Handle, Box<Connection>)> {
        let mut live: Vec<(u64, Handle)> = self.slots.iter().enumerate().filter_map(|(h, s)| s.as_ref().map(|s| (s.created, h))).collect();
        live.sort_unstable();
        let out = live.into_iter().map(|(_, h)| (h, self.retire(h))).collect();
        // nothing is live: the slots' and queues' memory back
        (self.slots, self.free, self.queue, self.aborted) = (Vec::new(), Vec::new(), VecDeque::new(), VecDeque::new());
        out
    }

    fn retire(&mut self, h: Handle) -> Box<Connection> {
        let slot = self.slots[h].take().expect("live");
        self.free.push(h);
        if let Some(flow) = self.flows.get(&slot.key) {
            if flow.current == Some(h) {
                let count = flow.count;
                self.flows.remove(&slot.key);
                self.retired.insert(slot.key, count);
            }
        }
        slot.conn
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flow::testkit::{Kit, Pkt};

    fn table() -> FlowTable {
        FlowTable::new(Delays::from_s(60.0, 5.0, 240.0))
    }

    fn feed(t: &mut FlowTable, kit: &Kit) -> Vec<(i64, Vec<usize>)> {
        let mut parts = Vec::new();
        t.split(&kit.batch(), |table, h, rows| {
            table.conn_mut(h).consume(&kit.batch(), rows);
            parts.push((table.conn(h).epoch, rows.to_vec()));
        });
        parts
    }

    /// Handshake, FIN each way, last ACK between endpoints 0 and `peer`, from `t` ms.
    fn closed(peer: usize, t: i64, isn: i64) -> Vec<Pkt> {
        use crate::events::flags::{FIN, SYN};
        vec![
            Pkt::new(0, peer, t, SYN, isn, 0, 0),
            Pkt::new(peer, 0, t + 1, SYN | ACK, 7000, isn + 1, 0),
            Pkt::ack(0, peer, t + 2, isn + 1, 7001),
            Pkt::new(0, peer, t + 3, FIN | ACK, isn + 1, 7001, 0),
            Pkt::new(peer, 0, t + 4, FIN | ACK, 7001, isn + 2, 0),
            Pkt::ack(0, peer, t + 5, isn + 2, 7002),
        ]
    }

    #[test]
    fn closed_connections_finish_after_the_close_delay_and_their_flows_count_on() {
        let mut t = table();
        let pkts: Vec<Pkt> = (1..200).flat_map(|p| closed(p, 0, 100 * p as i64)).collect();
        feed(&mut t, &Kit::new(0, &pkts));
        assert_eq!(t.live(), 199);
        assert!(t.expire(5_000_000_000).is_empty()); // silent for exactly the delay: not yet
        assert_eq!(t.expire(5_006_000_000).len(), 199);
        assert_eq!((t.live(), t.flows.len(), t.retired.len()), (0, 0, 199));
        // the same endpoints again, twice: epochs 1 and 2 of flows retired with a count of 1
        let again: Vec<Pkt> = [7, 150].iter().flat_map(|&p| closed(p, 10_000, 5)).collect();
        assert_eq!(feed(&mut t, &Kit::new(2000, &again)).iter().map(|p| p.0).collect::<Vec<_>>(), vec![1, 1]);
        assert_eq!(t.expire(16_000_000_000).len(), 2);
        let third = closed(7, 20_000, 9);
        assert_eq!(feed(&mut t, &Kit::new(3000, &third))[0].0, 2);
        assert_eq!(t.retired.get(&flow_key(&Kit::new(0, &closed(150, 0, 1)).batch(), 0)), Some(&2));
    }

    #[test]
    fn a_new_syn_after_a_reset_starts_the_next_epoch_and_the_old_one_is_finished_once() {
        use crate::events::flags::{RST, SYN};
        let mut t = table();
        let first = [Pkt::new(0, 1, 0, SYN, 100, 0, 0), Pkt::new(1, 0, 1, RST | ACK, 0, 101, 0)];
        feed(&mut t, &Kit::new(0, &first));
        assert!(t.expire(10_000).is_empty());
        assert!(t.expire(6_000_000_000).is_empty()); // reset: waits for the abort delay
                                                     // a new attempt 100 s later supersedes it before the abort delay passed
        let parts = feed(&mut t, &Kit::new(2, &[Pkt::new(0, 1, 100_000, SYN, 900, 0, 0)]));
        assert_eq!(parts[0].0, 1);
        let done = t.expire(100_000_000_000);
        assert_eq!(done.len(), 1); // the superseded one, once
        assert_eq!(t.expire(400_000_000_000).len(), 1); // then the attempt, after its abort delay
        assert_eq!(t.live(), 0);
    }
}
