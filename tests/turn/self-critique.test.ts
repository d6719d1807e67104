import { critiqueReason } from '../../src/turn/self-critique';

describe('self-critique sampling (R-B6, seed 003 §5.5.3)', () => {
  const never = () => 0.99;
  const always = () => 0;

  it('samples important decisions: the "high" confidence band 0.7–0.89, dangerous tools, several tools', () => {
    expect(critiqueReason({ confidence: 0.7, proposedRisks: [] }, 0.1, never)).toBe('mid_confidence');
    expect(critiqueReason({ confidence: 0.89, proposedRisks: [] }, 0.1, never)).toBe('mid_confidence');
    expect(critiqueReason({ confidence: 0.95, proposedRisks: ['high'] }, 0.1, never)).toBe('dangerous_tool');
    expect(critiqueReason({ confidence: 0.95, proposedRisks: ['critical'] }, 0.1, never)).toBe('dangerous_tool');
    expect(critiqueReason({ confidence: 0.95, proposedRisks: ['none', 'medium'] }, 0.1, never)).toBe('several_tools');
  });

  it("does not take a very confident answer (0.9 and above, seed 003's band 0.9–1.0) for a mid-confidence one", () => {
    // A routine greeting answered at 0.9 is "very high" in seed 003's confidence table (0.9–1.0 executes as is;
    // 0.7–0.89 is "high"): it is critiqued only by the random share, not every time.
    expect(critiqueReason({ confidence: 0.9, proposedRisks: [] }, 0.1, never)).toBeNull();
    expect(critiqueReason({ confidence: 0.9, proposedRisks: ['none'] }, 0.1, never)).toBeNull();
    expect(critiqueReason({ confidence: 1, proposedRisks: [] }, 0.1, never)).toBeNull();
    expect(critiqueReason({ confidence: 0.69, proposedRisks: [] }, 0.1, never)).toBeNull();
  });

  it('otherwise a random share given by SELF_CRITIQUE_RATE; 0 turns it off entirely', () => {
    expect(critiqueReason({ confidence: 0.95, proposedRisks: ['none'] }, 0.1, never)).toBeNull();
    expect(critiqueReason({ confidence: 0.95, proposedRisks: [] }, 0.1, always)).toBe('random');
    expect(critiqueReason({ confidence: 0.5, proposedRisks: [] }, 0.1, () => 0.05)).toBe('random');
    expect(critiqueReason({ confidence: 0.8, proposedRisks: ['high'] }, 0, always)).toBeNull();
  });
});
