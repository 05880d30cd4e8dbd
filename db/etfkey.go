package db

import (
	"slices"
	"time"
)

// The ETF lists are ordered by flow_date descending, then asset in enum
// order, then (per-fund figures) ticker ascending. Their keyset positions
// are packed into one positive int64 that is larger for rows that come
// earlier, so that they page exactly like the lists ordered by id
// descending (Page): the day counted from 0001-01-01 (plus one), then the
// asset's rank reversed, then for a fund the ticker's rank reversed. A
// ticker of at most 7 characters from [0-9A-Z] is a number in base 37 whose
// digit 0 pads short tickers, so numbers order as tickers do byte-wise
// (COLLATE "C").

const (
	tickerBase    = 37
	tickerLen     = 7
	tickerSpan    = 94_931_877_133 // tickerBase^tickerLen
	assetSlots    = 4              // len(Assets) when the packing was fixed
	maxKeyDays    = 3_652_059      // days from 0001-01-01 to 9999-12-31
	epochUnixDays = -719_162       // 0001-01-01 in days since 1970-01-01
)

// EtfPosition is the keyset position of a row of an ETF list.
type EtfPosition struct {
	Day    time.Time
	Asset  Asset
	Ticker string // empty for the per-asset list
}

func dayNumber(d time.Time) int64 {
	return d.Unix()/86400 - epochUnixDays + 1
}

func assetRank(a Asset) int64 {
	i := slices.Index(Assets, a)
	return int64(assetSlots - 1 - i)
}

// EtfFlowKey packs the position of an asset's record of day d.
func EtfFlowKey(a Asset, d time.Time) int64 {
	return dayNumber(d)*assetSlots + assetRank(a)
}

// EtfFundFlowKey packs the position of a fund's figure of day d; ticker
// must be a valid ticker (ValidTicker).
func EtfFundFlowKey(a Asset, ticker string, d time.Time) int64 {
	return EtfFlowKey(a, d)*tickerSpan + (tickerSpan - 1 - tickerNumber(ticker))
}

// DecodeEtfFlowKey unpacks an EtfFlowKey; ok is false for a number no
// record has.
func DecodeEtfFlowKey(k int64) (EtfPosition, bool) {
	if k <= 0 {
		return EtfPosition{}, false
	}
	days, rank := k/assetSlots, k%assetSlots
	i := assetSlots - 1 - int(rank)
	if days < 1 || days > maxKeyDays+1 || i >= len(Assets) {
		return EtfPosition{}, false
	}
	d := time.Unix((days-1+epochUnixDays)*86400, 0).UTC()
	return EtfPosition{Day: d, Asset: Assets[i]}, true
}

// DecodeEtfFundFlowKey unpacks an EtfFundFlowKey; ok is false for a number
// no figure has.
func DecodeEtfFundFlowKey(k int64) (EtfPosition, bool) {
	if k <= 0 {
		return EtfPosition{}, false
	}
	p, ok := DecodeEtfFlowKey(k / tickerSpan)
	if !ok {
		return EtfPosition{}, false
	}
	p.Ticker, ok = tickerOf(tickerSpan - 1 - k%tickerSpan)
	return p, ok
}

// ValidTicker reports whether s is a fund ticker: 1 to 7 characters, each
// an upper-case letter A-Z or a digit.
func ValidTicker(s string) bool {
	if len(s) < 1 || len(s) > tickerLen {
		return false
	}
	for i := range len(s) {
		if tickerDigit(s[i]) == 0 {
			return false
		}
	}
	return true
}

func tickerDigit(c byte) int64 {
	switch {
	case c >= '0' && c <= '9':
		return int64(c-'0') + 1
	case c >= 'A' && c <= 'Z':
		return int64(c-'A') + 11
	}
	return 0
}

func tickerNumber(s string) int64 {
	var n int64
	for i := range tickerLen {
		n *= tickerBase
		if i < len(s) {
			n += tickerDigit(s[i])
		}
	}
	return n
}

func tickerOf(n int64) (string, bool) {
	var b [tickerLen]byte
	for i := tickerLen - 1; i >= 0; i-- {
		d := n % tickerBase
		n /= tickerBase
		switch {
		case d == 0:
			b[i] = 0
		case d <= 10:
			b[i] = byte('0' + d - 1)
		default:
			b[i] = byte('A' + d - 11)
		}
	}
	end := 0
	for end < tickerLen && b[end] != 0 {
		end++
	}
	for _, c := range b[end:] { // padding only at the end
		if c != 0 {
			return "", false
		}
	}
	return string(b[:end]), end > 0
}
