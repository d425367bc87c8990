function text = flexfmu_struct_expression(value)
%FLEXFMU_STRUCT_EXPRESSION A MATLAB expression that evaluates to VALUE.
%   text = flexfmu_struct_expression(VALUE) writes a number, a numeric array
%   or a (nested) struct or struct array of them as text, such that
%   eval(text) gives VALUE back bit for bit (17 significant digits):
%     flexfmu_struct_expression(struct('mass', 0.1)) is 'struct(''mass'', 0.1)'
%   flexfmu_import uses it for FMU block parameters that Simulink shows as a
%   struct expression (set_param takes the value as text).
if isstruct(value)
    fields = fieldnames(value);
    parts = cell(1, numel(fields));
    for k = 1:numel(fields)
        items = arrayfun(@(e) flexfmu_struct_expression(e.(fields{k})), value(:)', 'UniformOutput', false);
        if numel(value) == 1
            parts{k} = sprintf('''%s'', %s', fields{k}, items{1});
        else
            parts{k} = sprintf('''%s'', {%s}', fields{k}, strjoin(items, ', '));
        end
    end
    text = sprintf('struct(%s)', strjoin(parts, ', '));
    if numel(value) > 1
        text = sprintf('reshape(%s, %s)', text, mat2str(size(value)));
    end
elseif isnumeric(value) || islogical(value)
    text = mat2str(value, 17);
else
    error('flexfmu_struct_expression:type', 'cannot write a %s as an expression', class(value));
end
end
