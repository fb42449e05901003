//! What loss forensics produces (DOMAIN.md sections 4-7): the live records the tracker still
//! changes, and the column tables they move into once nothing can change them (the Python
//! `RecordTable`s of `loss/table.py` are filled from these columns; the field names and order
//! are those of the dataclasses in `loss/records.py`, less `conn` and `direction`, which the
//! caller fills).
//!
//! Sequence numbers (`start`/`end`) are relative to the direction's ISN; `seq` is the 32-bit
//! value on the wire; times are ns on the capture clock. An integer column holds [`NONE`] for
//! None; an enum column holds its code (-1 for None), named by [`Vocab`].

use crate::loss::states::{named, EpisodeEnd, Spurious, Trigger};

/// Stands for None in an integer column.
pub const NONE: i64 = i64::MIN;

named! {
    /// Where a loss happened relative to the capture point (DOMAIN.md section 7).
    Where {
        /// seen here, then retransmitted: lost between here and the receiver
        Downstream = "downstream",
        /// never seen here, filled later by a retransmission
        Upstream = "upstream",
    }
}

named! {
    /// Why a hole was filled late (`Fill.cause`).
    Cause { Retransmission = "retransmission", Reordering = "reordering", Ambiguous = "ambiguous" }
}

/// One retransmitted data segment while it can still change (`records.Retransmission`).
#[derive(Clone, Debug)]
pub struct Rexmit {
    pub index: i64,
    pub time_ns: i64,
    pub seq: i64,
    pub start: i64,
    pub end: i64,
    pub nth: i64,
    pub trigger: Trigger,
    pub episode: Option<i64>,
    pub rtd_ns: Option<i64>,
    pub dupacks: i64,
    pub sacked_segments: i64,
    pub silence_ns: i64,
    pub since_ack_ns: Option<i64>,
    pub flight_segments: i64,
    pub backoff: i64,
    pub rto_estimate_ns: Option<i64>,
    pub srtt_ns: Option<i64>,
    pub highest: bool,
    pub thin: bool,
    pub tsval: i64,
    pub rto_run: i64,
    pub rto_interval_ns: Option<i64>,
    pub episode_trigger: Option<Trigger>,
    pub spurious: Option<Spurious>,
    pub covered_ns: Option<i64>,
    pub evidence: String,
}

/// One recovery episode while it can still change (`records.RecoveryEpisode`).
#[derive(Clone, Debug)]
pub struct Episode {
    pub id: i64,
    pub trigger: Trigger,
    pub start_ns: i64,
    pub start_index: i64,
    pub recovery_point: i64,
    pub end_ns: Option<i64>,
    pub ended: EpisodeEnd,
    pub retransmissions: i64,
    pub holes: i64,
    pub rtos: i64,
    pub sack_in_use: bool,
    pub spurious: i64,
}

/// Which names an enum column's codes stand for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Vocab {
    Trigger,
    Spurious,
    EpisodeEnd,
    Where,
    Cause,
}

impl Vocab {
    /// The names of the codes, in code order.
    pub fn names(self) -> Vec<&'static str> {
        fn all<T: Copy>(v: &[T], name: fn(T) -> &'static str) -> Vec<&'static str> {
            v.iter().map(|&x| name(x)).collect()
        }
        match self {
            Vocab::Trigger => all(Trigger::ALL, Trigger::name),
            Vocab::Spurious => all(Spurious::ALL, Spurious::name),
            Vocab::EpisodeEnd => all(EpisodeEnd::ALL, EpisodeEnd::name),
            Vocab::Where => all(Where::ALL, Where::name),
            Vocab::Cause => all(Cause::ALL, Cause::name),
        }
    }
}

/// A column of a table.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    Int(Vec<i64>),
    Bool(Vec<bool>),
    Code(Vocab, Vec<i8>),
    /// a list of codes per record: the codes and where each record's list ends
    Codes(Vocab, Vec<i8>, Vec<u32>),
    Text(Vec<String>),
}

impl Column {
    fn take(&mut self, order: &[usize]) {
        fn pick<T: Clone>(v: &[T], order: &[usize]) -> Vec<T> {
            order.iter().map(|&i| v[i].clone()).collect()
        }
        match self {
            Column::Int(v) => *v = pick(v, order),
            Column::Bool(v) => *v = pick(v, order),
            Column::Code(_, v) => *v = pick(v, order),
            Column::Text(v) => *v = pick(v, order),
            Column::Codes(_, codes, ends) => {
                let (mut c, mut e) = (Vec::with_capacity(codes.len()), Vec::with_capacity(ends.len()));
                for &i in order {
                    let lo = if i == 0 { 0 } else { ends[i - 1] as usize };
                    c.extend_from_slice(&codes[lo..ends[i] as usize]);
                    e.push(c.len() as u32);
                }
                *codes = c;
                *ends = e;
            }
        }
    }
}

/// The records of one kind, one column per field (in the dataclass's order). The columns are
/// made with the first record: most directions of a capture of many short connections never
/// have one of a kind, and a live loss tracker holds five tables (about 40 columns each were
/// 9 KB a direction before any record, most of a SYN-scan connection's memory).
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    schema: &'static str,
    /// the fields' names and columns (empty until the first record)
    pub names: Vec<&'static str>,
    pub columns: Vec<Column>,
    pub len: usize,
}

/// Appends one record's fields in order.
pub struct Row<'a> {
    table: &'a mut Table,
    at: usize,
}

impl Row<'_> {
    fn next(&mut self) -> &mut Column {
        self.at += 1;
        &mut self.table.columns[self.at - 1]
    }
    pub fn int(&mut self, v: i64) -> &mut Self {
        self.opt(Some(v))
    }
    pub fn opt(&mut self, v: Option<i64>) -> &mut Self {
        match self.next() {
            Column::Int(c) => c.push(v.unwrap_or(NONE)),
            _ => unreachable!("not an integer column"),
        }
        self
    }
    pub fn flag(&mut self, v: bool) -> &mut Self {
        match self.next() {
            Column::Bool(c) => c.push(v),
            _ => unreachable!("not a boolean column"),
        }
        self
    }
    pub fn code(&mut self, v: Option<u8>) -> &mut Self {
        match self.next() {
            Column::Code(_, c) => c.push(v.map_or(-1, |x| x as i8)),
            _ => unreachable!("not a code column"),
        }
        self
    }
    pub fn codes(&mut self, v: impl Iterator<Item = u8>) -> &mut Self {
        match self.next() {
            Column::Codes(_, c, ends) => {
                c.extend(v.map(|x| x as i8));
                ends.push(c.len() as u32);
            }
            _ => unreachable!("not a code list column"),
        }
        self
    }
    pub fn text(&mut self, v: &str) -> &mut Self {
        match self.next() {
            Column::Text(c) => c.push(v.to_string()),
            _ => unreachable!("not a text column"),
        }
        self
    }
}

impl Drop for Row<'_> {
    fn drop(&mut self) {
        debug_assert_eq!(self.at, self.table.columns.len(), "a row must fill every column");
        self.table.len += 1;
    }
}

impl Table {
    pub fn row(&mut self) -> Row<'_> {
        if self.columns.is_empty() {
            self.make_columns();
        }
        Row { table: self, at: 0 }
    }

    /// Put the records in the order of the permutation `order`.
    pub fn reorder(&mut self, order: &[usize]) {
        assert_eq!(order.len(), self.len, "a permutation of every record is needed");
        for c in &mut self.columns {
            c.take(order);
        }
    }

    /// An integer column by name.
    pub fn ints(&self, name: &str) -> &[i64] {
        if self.len == 0 {
            return &[];
        }
        let i = self.names.iter().position(|n| *n == name).expect("no such column");
        match &self.columns[i] {
            Column::Int(v) => v,
            _ => panic!("{name} is not an integer column"),
        }
    }

    /// A table of the fields `schema` names as `name:type` (int, bool, text, the vocabulary
    /// of an enum column, or `triggers` for a list of triggers), in the dataclass's order; its
    /// columns are made with its first record ([`Table::row`]).
    fn of(schema: &'static str) -> Table {
        Table { schema, names: Vec::new(), columns: Vec::new(), len: 0 }
    }

    fn make_columns(&mut self) {
        for field in self.schema.split_whitespace() {
            let (name, kind) = field.split_once(':').expect("name:type");
            self.names.push(name);
            self.columns.push(match kind {
                "int" => Column::Int(Vec::new()),
                "bool" => Column::Bool(Vec::new()),
                "text" => Column::Text(Vec::new()),
                "trigger" => Column::Code(Vocab::Trigger, Vec::new()),
                "spurious" => Column::Code(Vocab::Spurious, Vec::new()),
                "ended" => Column::Code(Vocab::EpisodeEnd, Vec::new()),
                "where" => Column::Code(Vocab::Where, Vec::new()),
                "cause" => Column::Code(Vocab::Cause, Vec::new()),
                "triggers" => Column::Codes(Vocab::Trigger, Vec::new(), Vec::new()),
                _ => unreachable!("no column type {kind}"),
            });
        }
    }

    /// `records.Retransmission`
    pub fn retransmissions() -> Table {
        Table::of(
            "index:int time_ns:int seq:int start:int end:int nth:int trigger:trigger episode:int rtd_ns:int dupacks:int \
             sacked_segments:int silence_ns:int since_ack_ns:int flight_segments:int backoff:int rto_estimate_ns:int srtt_ns:int \
             highest:bool thin:bool tsval:int rto_run:int rto_interval_ns:int episode_trigger:trigger spurious:spurious \
             covered_ns:int evidence:text",
        )
    }

    /// `records.Fill`
    pub fn fills() -> Table {
        Table::of("index:int time_ns:int seq:int start:int end:int opened_ns:int cause:cause evidence:text")
    }

    /// `records.RecoveryEpisode`
    pub fn episodes() -> Table {
        Table::of(
            "id:int trigger:trigger start_ns:int start_index:int recovery_point:int end_ns:int ended:ended retransmissions:int \
             holes:int rtos:int sack_in_use:bool spurious:int",
        )
    }

    /// `records.LossIncident`
    pub fn incidents() -> Table {
        Table::of(
            "start:int end:int seq:int first_index:int first_ns:int retransmissions:int last_rexmit_ns:int covered_ns:int \
             where:where lost:bool lost_transmissions:int triggers:triggers thin:bool",
        )
    }

    /// `records.LostTransmission`
    pub fn lost() -> Table {
        Table::of("index:int time_ns:int seq:int start:int end:int original:bool where:where")
    }

    pub fn push_rexmit(&mut self, r: &Rexmit) {
        self.row()
            .int(r.index)
            .int(r.time_ns)
            .int(r.seq)
            .int(r.start)
            .int(r.end)
            .int(r.nth)
            .code(Some(r.trigger as u8))
            .opt(r.episode)
            .opt(r.rtd_ns)
            .int(r.dupacks)
            .int(r.sacked_segments)
            .int(r.silence_ns)
            .opt(r.since_ack_ns)
            .int(r.flight_segments)
            .int(r.backoff)
            .opt(r.rto_estimate_ns)
            .opt(r.srtt_ns)
            .flag(r.highest)
            .flag(r.thin)
            .int(r.tsval)
            .int(r.rto_run)
            .opt(r.rto_interval_ns)
            .code(r.episode_trigger.map(|t| t as u8))
            .code(r.spurious.map(|s| s as u8))
            .opt(r.covered_ns)
            .text(&r.evidence);
    }

    pub fn push_episode(&mut self, e: &Episode) {
        self.row()
            .int(e.id)
            .code(Some(e.trigger as u8))
            .int(e.start_ns)
            .int(e.start_index)
            .int(e.recovery_point)
            .opt(e.end_ns)
            .code(Some(e.ended as u8))
            .int(e.retransmissions)
            .int(e.holes)
            .int(e.rtos)
            .flag(e.sack_in_use)
            .int(e.spurious);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_and_reorder() {
        let mut t = Table::incidents();
        for (s, trig) in [(30, vec![Trigger::Fast, Trigger::Rto]), (10, vec![]), (20, vec![Trigger::Tlp])] {
            t.row()
                .int(s)
                .int(s + 10)
                .int(s)
                .opt(None)
                .int(0)
                .int(1)
                .int(2)
                .opt(Some(3))
                .code(Some(Where::Upstream as u8))
                .flag(true)
                .int(1)
                .codes(trig.into_iter().map(|x| x as u8))
                .flag(false);
        }
        assert_eq!(t.len, 3);
        t.reorder(&[1, 2, 0]);
        assert_eq!(t.ints("start"), &[10, 20, 30]);
        assert_eq!(t.ints("first_index"), &[NONE; 3]);
        assert_eq!(t.columns[11], Column::Codes(Vocab::Trigger, vec![4, 0, 3], vec![0, 1, 3]));
    }
}
