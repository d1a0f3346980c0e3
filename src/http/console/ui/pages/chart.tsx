/** One series of a bar chart: its name, colour (a CSS variable) and value per bucket. */
export interface Series {
  name: string;
  color: string;
  values: number[];
}

/**
 * Stacked bars per bucket, drawn as SVG (a chart library would outweigh the whole console).
 * Screen readers get the totals in the label and every figure in a table below the chart.
 */
export function BarChart({ title, labels, series }: { title: string; labels: string[]; series: Series[] }) {
  const totals = labels.map((_, i) => series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0));
  const max = Math.max(1, ...totals);
  const width = 600;
  const height = 160;
  const slot = width / Math.max(1, labels.length);
  const bar = Math.max(2, slot * 0.7);
  const sums = series.map((s) => `${s.name} ${s.values.reduce((a, b) => a + b, 0)}`).join(", ");
  return (
    <figure class="chart card">
      <figcaption>
        <strong>{title}</strong>
        <span class="legend">
          {series.map((s) => (
            <span key={s.name}>
              <i style={{ background: `var(${s.color})` }} aria-hidden="true" /> {s.name}
            </span>
          ))}
        </span>
      </figcaption>
      <svg viewBox={`0 0 ${width} ${height + 18}`} role="img" aria-label={`${title}: ${sums} from ${labels[0]} to ${labels[labels.length - 1]}`} preserveAspectRatio="none">
        <line x1="0" x2={width} y1={height} y2={height} class="axis" />
        {labels.map((label, i) => {
          let y = height;
          return (
            <g key={label}>
              {series.map((s) => {
                const h = ((s.values[i] ?? 0) / max) * (height - 8);
                y -= h;
                return h > 0 ? (
                  <rect key={s.name} x={i * slot + (slot - bar) / 2} y={y} width={bar} height={h} style={{ fill: `var(${s.color})` }}>
                    <title>{`${label}: ${s.name} ${s.values[i]}`}</title>
                  </rect>
                ) : null;
              })}
            </g>
          );
        })}
        <text x="0" y={height + 14} class="tick">
          {labels[0]}
        </text>
        <text x={width} y={height + 14} class="tick" text-anchor="end">
          {labels[labels.length - 1]}
        </text>
        <text x="0" y="10" class="tick">
          max {max}
        </text>
      </svg>
      <details class="chart-data">
        <summary>Figures</summary>
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Period</th>
                {series.map((s) => (
                  <th scope="col" class="num" key={s.name}>
                    {s.name}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {labels.map((label, i) => (
                <tr key={label}>
                  <th scope="row">{label}</th>
                  {series.map((s) => (
                    <td class="num" key={s.name}>
                      {s.values[i]}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}
