//! A classic BPF interpreter, for the sources whose filter runs in user space (pcap
//! files, DPDK, AF_XDP): the same program the kernel runs for AF_PACKET.
//!
//! [`Program::new`] checks a program once, as the kernel's and libpcap's validators do
//! (every opcode known, every jump forward and inside the program, scratch memory
//! indices below 16, no division by a constant zero, a `ret` at the end), so that
//! [`Program::run`] cannot go wrong: jumps only go forward, so a run takes at most one
//! step per instruction, and every packet load is bounds-checked (a load past the
//! captured bytes rejects the packet, as in libpcap's `bpf_filter`).

use super::{BpfError, Insn, MAX_INSNS};

// Instruction classes, sizes, modes and operations (linux/filter.h, pcap/bpf.h).
const LD: u16 = 0x00;
const LDX: u16 = 0x01;
const ST: u16 = 0x02;
const STX: u16 = 0x03;
const ALU: u16 = 0x04;
const JMP: u16 = 0x05;
const RET: u16 = 0x06;
const MISC: u16 = 0x07;

const W: u16 = 0x00;
const H: u16 = 0x08;
const B: u16 = 0x10;

const IMM: u16 = 0x00;
const ABS: u16 = 0x20;
const IND: u16 = 0x40;
const MEM: u16 = 0x60;
const LEN: u16 = 0x80;
const MSH: u16 = 0xa0;

const ADD: u16 = 0x00;
const SUB: u16 = 0x10;
const MUL: u16 = 0x20;
const DIV: u16 = 0x30;
const OR: u16 = 0x40;
const AND: u16 = 0x50;
const LSH: u16 = 0x60;
const RSH: u16 = 0x70;
const NEG: u16 = 0x80;
const MOD: u16 = 0x90;
const XOR: u16 = 0xa0;

const JA: u16 = 0x00;
const JEQ: u16 = 0x10;
const JGT: u16 = 0x20;
const JGE: u16 = 0x30;
const JSET: u16 = 0x40;

const SRC_X: u16 = 0x08;
const RVAL_K: u16 = 0x00;
const RVAL_X: u16 = 0x08;
const RVAL_A: u16 = 0x10;
const TAX: u16 = 0x00;
const TXA: u16 = 0x80;

/// Words of scratch memory (`BPF_MEMWORDS`).
const MEMWORDS: usize = 16;
/// Offsets from here on are Linux's special loads (`SKF_LL_OFF`, `SKF_NET_OFF`, and
/// `SKF_AD_OFF` for ancillary data), which only the kernel can answer.
const SKF_LL_OFF: u32 = 0xffe0_0000;
#[cfg(test)]
const SKF_AD_OFF: u32 = 0xffff_f000;

/// A checked classic BPF program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    insns: Box<[Insn]>,
}

fn class(code: u16) -> u16 {
    code & 0x07
}

fn invalid(at: usize, why: &'static str) -> BpfError {
    BpfError::Invalid { at, why }
}

impl Program {
    /// Checks `insns` for the interpreter.
    pub fn new(insns: &[Insn]) -> Result<Program, BpfError> {
        if insns.is_empty() {
            return Err(BpfError::Empty);
        }
        if insns.len() > MAX_INSNS {
            return Err(BpfError::TooLong(insns.len()));
        }
        let n = insns.len();
        for (pc, i) in insns.iter().enumerate() {
            let c = i.code;
            match class(c) {
                LD | LDX => {
                    let mode = c & 0xe0;
                    let size = c & 0x18;
                    let ok = match (class(c), mode) {
                        (LD, IMM) | (LD, LEN) | (LDX, IMM) | (LDX, LEN) => size == W,
                        (LD, ABS) | (LD, IND) => matches!(size, W | H | B),
                        (LD, MEM) | (LDX, MEM) => {
                            if size != W {
                                false
                            } else if i.k as usize >= MEMWORDS {
                                return Err(invalid(pc, "scratch memory index above 15"));
                            } else {
                                true
                            }
                        }
                        (LDX, MSH) => size == B,
                        _ => false,
                    };
                    if !ok {
                        return Err(invalid(pc, "unknown load"));
                    }
                    if matches!(mode, ABS | IND | MSH) && i.k >= SKF_LL_OFF {
                        return Err(invalid(
                            pc,
                            "Linux ancillary-data load (compiled for a live socket): only the kernel runs it",
                        ));
                    }
                }
                ST | STX => {
                    if c & !0x07 != 0 {
                        return Err(invalid(pc, "unknown store"));
                    }
                    if i.k as usize >= MEMWORDS {
                        return Err(invalid(pc, "scratch memory index above 15"));
                    }
                }
                ALU => {
                    let op = c & 0xf0;
                    if c & !(0xf0 | SRC_X | 0x07) != 0 {
                        return Err(invalid(pc, "unknown ALU operation"));
                    }
                    match op {
                        ADD | SUB | MUL | OR | AND | LSH | RSH | XOR => {}
                        NEG => {}
                        DIV | MOD => {
                            if c & SRC_X == 0 && i.k == 0 {
                                return Err(invalid(pc, "division by zero"));
                            }
                        }
                        _ => return Err(invalid(pc, "unknown ALU operation")),
                    }
                }
                JMP => {
                    let op = c & 0xf0;
                    if c & !(0xf0 | SRC_X | 0x07) != 0 {
                        return Err(invalid(pc, "unknown jump"));
                    }
                    match op {
                        JA => {
                            if (pc as u64 + 1 + u64::from(i.k)) >= n as u64 {
                                return Err(invalid(pc, "jump past the end"));
                            }
                        }
                        JEQ | JGT | JGE | JSET => {
                            let far = usize::from(i.jt.max(i.jf));
                            if pc + 1 + far >= n {
                                return Err(invalid(pc, "jump past the end"));
                            }
                        }
                        _ => return Err(invalid(pc, "unknown jump")),
                    }
                }
                RET => {
                    if !matches!(c & 0x18, RVAL_K | RVAL_X | RVAL_A) || c & !0x1e != 0 {
                        return Err(invalid(pc, "unknown return"));
                    }
                }
                MISC => {
                    if !matches!(c & 0xf8, TAX | TXA) {
                        return Err(invalid(pc, "unknown miscellaneous instruction"));
                    }
                }
                _ => unreachable!("class is 3 bits"),
            }
        }
        if insns.last().is_some_and(|i| class(i.code) != RET) {
            return Err(invalid(n - 1, "the last instruction is not a return"));
        }
        Ok(Program {
            insns: insns.into(),
        })
    }

    /// The instructions.
    pub fn insns(&self) -> &[Insn] {
        &self.insns
    }

    /// Whether the program accepts a packet whose captured bytes are `data` and whose
    /// length on the wire is `wirelen` (a non-zero return value).
    #[inline]
    pub fn matches(&self, data: &[u8], wirelen: u32) -> bool {
        self.run(data, wirelen) != 0
    }

    /// Runs the program: its return value (bytes to keep; 0 = reject).
    pub fn run(&self, p: &[u8], wirelen: u32) -> u32 {
        let mut a: u32 = 0;
        let mut x: u32 = 0;
        let mut mem = [0u32; MEMWORDS];
        let mut pc = 0usize;
        let ld = |at: u32, size: u16| -> Option<u32> {
            let at = at as usize;
            match size {
                W => p
                    .get(at..at.checked_add(4)?)
                    .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]])),
                H => p
                    .get(at..at.checked_add(2)?)
                    .map(|b| u32::from(u16::from_be_bytes([b[0], b[1]]))),
                _ => p.get(at).map(|&b| u32::from(b)),
            }
        };
        while let Some(i) = self.insns.get(pc) {
            pc += 1;
            let c = i.code;
            let k = i.k;
            match class(c) {
                LD => {
                    a = match c & 0xe0 {
                        IMM => k,
                        LEN => wirelen,
                        MEM => mem[k as usize % MEMWORDS],
                        ABS => match ld(k, c & 0x18) {
                            Some(v) => v,
                            None => return 0,
                        },
                        _ => match x.checked_add(k).and_then(|at| ld(at, c & 0x18)) {
                            Some(v) => v,
                            None => return 0,
                        },
                    }
                }
                LDX => {
                    x = match c & 0xe0 {
                        IMM => k,
                        LEN => wirelen,
                        MEM => mem[k as usize % MEMWORDS],
                        _ => match p.get(k as usize) {
                            Some(&b) => u32::from(b & 0x0f) << 2,
                            None => return 0,
                        },
                    }
                }
                ST => mem[k as usize % MEMWORDS] = a,
                STX => mem[k as usize % MEMWORDS] = x,
                ALU => {
                    let v = if c & SRC_X != 0 { x } else { k };
                    a = match c & 0xf0 {
                        ADD => a.wrapping_add(v),
                        SUB => a.wrapping_sub(v),
                        MUL => a.wrapping_mul(v),
                        DIV => match a.checked_div(v) {
                            Some(q) => q,
                            None => return 0,
                        },
                        MOD => match a.checked_rem(v) {
                            Some(r) => r,
                            None => return 0,
                        },
                        OR => a | v,
                        AND => a & v,
                        LSH => a.checked_shl(v).unwrap_or(0),
                        RSH => a.checked_shr(v).unwrap_or(0),
                        XOR => a ^ v,
                        _ => a.wrapping_neg(),
                    }
                }
                JMP => {
                    let op = c & 0xf0;
                    if op == JA {
                        pc += k as usize;
                        continue;
                    }
                    let v = if c & SRC_X != 0 { x } else { k };
                    let taken = match op {
                        JEQ => a == v,
                        JGT => a > v,
                        JGE => a >= v,
                        _ => a & v != 0,
                    };
                    pc += usize::from(if taken { i.jt } else { i.jf });
                }
                RET => {
                    return match c & 0x18 {
                        RVAL_A => a,
                        RVAL_X => x,
                        _ => k,
                    };
                }
                _ => {
                    if c & 0xf8 == TXA {
                        a = x;
                    } else {
                        x = a;
                    }
                }
            }
        }
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bpf::program::parse;

    /// `tcpdump -dd udp` on Ethernet.
    const UDP_DD: &str = "{ 0x28, 0, 0, 0x0000000c }, { 0x15, 0, 5, 0x000086dd },
        { 0x30, 0, 0, 0x00000014 }, { 0x15, 6, 0, 0x00000011 }, { 0x15, 0, 6, 0x0000002c },
        { 0x30, 0, 0, 0x00000036 }, { 0x15, 3, 4, 0x00000011 }, { 0x15, 0, 3, 0x00000800 },
        { 0x30, 0, 0, 0x00000017 }, { 0x15, 0, 1, 0x00000011 }, { 0x6, 0, 0, 0x00040000 },
        { 0x6, 0, 0, 0x00000000 },";

    /// An Ethernet + IPv4 frame with IP protocol `proto` (header only, 34 bytes).
    fn ipv4(proto: u8) -> Vec<u8> {
        let mut f = vec![0u8; 34];
        f[12] = 0x08;
        f[14] = 0x45;
        f[23] = proto;
        f
    }

    #[test]
    fn runs_a_tcpdump_program() {
        let p = Program::new(&parse(UDP_DD).unwrap()).unwrap();
        assert!(p.matches(&ipv4(17), 34));
        assert!(!p.matches(&ipv4(6), 34));
        // Cut before the protocol byte: the load fails and the packet is rejected.
        assert!(!p.matches(&ipv4(17)[..20], 34));
        assert!(!p.matches(&[], 0));
        assert_eq!(p.run(&ipv4(17), 34), 0x40000);
    }

    fn i(code: u16, jt: u8, jf: u8, k: u32) -> Insn {
        Insn { code, jt, jf, k }
    }

    #[test]
    fn arithmetic_memory_and_indirect_loads() {
        // x = 4 * (p[0] & 0xf); a = p[x + 1]; a = a * 3 + 1; m[3] = a; a = m[3] % 7; ret a
        let prog = [
            i(LDX | B | MSH, 0, 0, 0),
            i(LD | B | IND, 0, 0, 1),
            i(ALU | MUL, 0, 0, 3),
            i(ALU | ADD, 0, 0, 1),
            i(ST, 0, 0, 3),
            i(LD | MEM, 0, 0, 3),
            i(ALU | MOD, 0, 0, 7),
            i(RET | RVAL_A, 0, 0, 0),
        ];
        let p = Program::new(&prog).unwrap();
        // p[0] = 0x01 -> x = 4; p[5] = 10 -> (10 * 3 + 1) % 7 = 3.
        assert_eq!(p.run(&[0x01, 0, 0, 0, 0, 10], 6), 3);
        // Division by X = 0 rejects; shifts of 32 or more give 0.
        let div = [
            i(LD | IMM, 0, 0, 9),
            i(ALU | DIV | SRC_X, 0, 0, 0),
            i(RET | RVAL_K, 0, 0, 1),
        ];
        assert_eq!(Program::new(&div).unwrap().run(&[], 0), 0);
        let shl = [
            i(LD | IMM, 0, 0, 1),
            i(LDX | IMM, 0, 0, 40),
            i(ALU | LSH | SRC_X, 0, 0, 0),
            i(RET | RVAL_A, 0, 0, 0),
        ];
        assert_eq!(Program::new(&shl).unwrap().run(&[], 0), 0);
        // len, tax/txa, ja, jset.
        let misc = [
            i(LD | LEN, 0, 0, 0),
            i(MISC | TAX, 0, 0, 0),
            i(JMP | JA, 0, 0, 1),
            i(RET | RVAL_K, 0, 0, 0),
            i(MISC | TXA, 0, 0, 0),
            i(JMP | JSET, 0, 1, 0x100),
            i(RET | RVAL_X, 0, 0, 0),
            i(RET | RVAL_K, 0, 0, 7),
        ];
        let m = Program::new(&misc).unwrap();
        assert_eq!(m.run(&[], 0x100), 0x100);
        assert_eq!(m.run(&[], 0x0ff), 7);
    }

    #[test]
    fn refuses_what_could_go_wrong() {
        let bad = |prog: &[Insn]| Program::new(prog).unwrap_err().to_string();
        assert!(bad(&[]).contains("empty"));
        assert!(bad(&[i(LD | IMM, 0, 0, 1)]).contains("not a return"));
        assert!(bad(&[i(JMP | JEQ, 3, 0, 1), i(RET, 0, 0, 0)]).contains("past the end"));
        assert!(bad(&[i(JMP | JA, 0, 0, u32::MAX), i(RET, 0, 0, 0)]).contains("past the end"));
        assert!(bad(&[i(ST, 0, 0, 16), i(RET, 0, 0, 0)]).contains("scratch memory"));
        assert!(bad(&[i(ALU | DIV, 0, 0, 0), i(RET, 0, 0, 0)]).contains("division"));
        assert!(bad(&[i(0xff, 0, 0, 0), i(RET, 0, 0, 0)]).contains("unknown"));
        // `vlan` compiled for a live Linux socket loads SKF_AD_VLAN_TAG_PRESENT.
        let anc = [i(LD | B | ABS, 0, 0, SKF_AD_OFF + 44), i(RET, 0, 0, 0)];
        assert!(bad(&anc).contains("ancillary"));
        let long = vec![i(RET, 0, 0, 0); MAX_INSNS + 1];
        assert!(bad(&long).contains("4097"));
    }

    #[test]
    fn never_panics_on_any_program_the_checker_takes() {
        // Every opcode with small operands, over packets of several lengths: whatever
        // the checker accepts runs to a return without panicking.
        let mut taken = 0;
        for code in 0u16..=0xff {
            for k in [0u32, 1, 3, 15, 16, 100, u32::MAX] {
                let prog = [i(code, 0, 0, k), i(RET | RVAL_A, 0, 0, 0)];
                if let Ok(p) = Program::new(&prog) {
                    taken += 1;
                    for len in [0usize, 1, 14, 60] {
                        let data = vec![0xa5u8; len];
                        let _ = p.run(&data, len as u32);
                    }
                }
            }
        }
        assert!(taken > 100, "{taken}");
    }
}
